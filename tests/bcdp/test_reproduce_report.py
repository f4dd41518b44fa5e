"""The Figure 3 verdicts of ``dpjax reproduce bcdp`` are read off the numbers (synthetic runs)."""

from dpjax.reproduce import bcdp_report


def _stats(median, se=0.01):
    return {"median": median, "q25": median * 0.9, "q75": median * 1.1, "mean": median,
            "se_mean": se}


def _row(q, bcdp, ldp, authors=(1.0, 2.0)):
    row = {"q": q, "bcdp": _stats(bcdp), "ldp": _stats(ldp),
           "bcdp_authors_protocol": _stats(authors[0]), "ldp_authors_protocol": _stats(authors[1]),
           "bcdp_authors_protocol_unbiased": _stats(bcdp), "ldp_authors_protocol_unbiased":
           _stats(ldp), "mse_difference": {"mean": bcdp - ldp, "se": 0.014},
           "c_d": 0.3, "exact_mean_mse_bcdp": 1.0, "exact_mean_mse_ldp": 1.0, "zeta_best": 0.5,
           "variance_bound_best_zeta": 1.0}
    return row


def test_verdicts_follow_the_numbers():
    fig3 = {"duchi": {"trials": 5, "rows": [_row(0.0, 0.2, 1.5), _row(0.5, 2.0, 1.5),
                                              _row(1.0, 1.5, 1.5)]},
            "privunit": {"trials": 5, "rows": [_row(0.0, 0.1, 1.2), _row(0.5, 1.0, 1.2),
                                                 _row(1.0, 1.21, 1.2)]}}
    ver = bcdp_report.verdicts(fig3)
    assert ver["duchi"]["below_at_q"] == [0.0]
    assert not ver["duchi"]["below_for_all_q_le_0.8"]
    assert ver["duchi"]["significantly_above_at_q"] == [0.5]
    assert ver["duchi"]["q1"]["within_noise"]
    assert ver["duchi"]["below_at_q_authors_protocol"] == [0.0, 0.5, 1.0]
    assert ver["privunit"]["below_for_all_q_le_0.8"]
    assert ver["privunit"]["q1"]["within_noise"]  # 0.01 apart, 3 s.e. = 0.042
    assert ver["privunit_over_duchi_median"]["bcdp"][1] == 0.5
    text = "\n".join(bcdp_report.figure3_section(fig3, ver))
    assert "at every q <= 0.8: **False**" in text and "at every q <= 0.8: **True**" in text
