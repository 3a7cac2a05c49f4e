"""Authored notes (authored.py): the numeral rule, claims judged against the noise, and the errors a template
author sees, each one line naming file, line and value."""
import re
from pathlib import Path

import pandas as pd
import pytest

from fieldnote.core.errors import PipelineError
from fieldnote.publish.authored import Evidence, Number, judge, render, typed_numerals


@pytest.mark.parametrize("text", ["sm_90 and sm_89", "mage-006", "3xTF32", "128-bit loads", "an H200", "PR #42",
                                  "`cp_async_wait_group(1)`", "float4", "issue #54", "x86_64"])
def test_identifiers_with_digits_pass(text):
    assert typed_numerals(text) == []


@pytest.mark.parametrize("text, number", [("about 69 µs", "69"), ("4 x 4 tiles", "4"), ("1e-7 error", "1e-7"),
                                          ("a 1024x768 shape", "1024x768"), ("a 7–10% gap", "7"),
                                          ("68.62.", "68.62"),
                                          # a number dressed as a word: a measure, or set in code type
                                          ("it took 46us", "46us"), ("1.05x faster", "1.05x"),
                                          ("a 6.22-us kernel", "6.22-us"), ("76% of the roof", "76%"),
                                          ("`46.12` µs", "46.12"), ("`1.05x`", "1.05x"), ("2 GB/s", "2"),
                                          # a count glued to what it counts
                                          ("one 256-thread block", "256-thread"), ("a 64-deep K step", "64-deep")])
def test_a_typed_number_is_found(text, number):
    assert typed_numerals(text)[0] == number


def point(value, low=None, high=None, source="x"):
    return Number(value, f"{value:.2f}", source, low, high)


def test_judging_needs_the_intervals_apart():
    assert judge(point(1.0, 0.9, 1.1), point(2.0, 1.9, 2.1))[0] == "below"
    assert judge(point(2.0, 1.9, 2.1), point(1.0, 0.9, 1.1))[0] == "above"
    verdict, margin = judge(point(1.0, 0.9, 1.5), point(1.2, 1.1, 1.3))
    assert verdict == "not distinguishable" and margin < 0


def summary():
    return pd.DataFrame({"op": ["layernorm", "layernorm"], "implementation": ["cuda", "triton"],
                         "kernel_us": [6.22, 5.47], "kernel_low_us": [6.20, 5.44], "kernel_high_us": [6.27, 5.52],
                         "span_mean_us": [37.45, 44.88], "launches": [1, 1]})


def render_text(tmp_path: Path, text: str):
    template = tmp_path / "note.md"
    template.write_text(text)
    evidence = Evidence("demo", {"summary": summary()}, {"gpu": "NVIDIA H200"}, {}, {})
    return render(template, evidence, {"kernel": "| table |"}, {})


def test_a_template_renders_numbers_from_the_evidence_and_records_its_claims(tmp_path):
    rendered = render_text(tmp_path, 'Ours {{ kernel("layernorm") }} µs, Triton {{ kernel("layernorm", "triton") }}'
                           ' µs.\n{{ claim("behind Triton", kernel("layernorm"), ">", kernel("layernorm", "triton"))'
                           ' }}\n{{ table("kernel") }}\n')
    assert rendered.text.startswith("Ours 6.22 µs, Triton 5.47 µs.")
    row = rendered.claims.iloc[0]
    assert (row["claim"], row["verdict"], row["line"], bool(row["holds"])) == ("behind Triton", "above", 2, True)
    assert row["margin"] == pytest.approx(6.20 - 5.52)


def test_a_false_claim_stops_the_note_naming_file_line_claim_and_values(tmp_path):
    with pytest.raises(PipelineError) as e:
        render_text(tmp_path, 'line one\n\n{{ claim("ahead of Triton", kernel("layernorm"), "<", '
                    'kernel("layernorm", "triton")) }}\n')
    message = str(e.value)
    assert message.startswith(f"{tmp_path / 'note.md'}: line 3: claim 'ahead of Triton' is false: ")
    assert "= 6.22 [6.2, 6.27] is above" in message and "= 5.47 [5.44, 5.52], not below" in message


def test_a_branch_words_both_outcomes(tmp_path):
    text = ('{% set v = verdict("vs triton", kernel("layernorm"), kernel("layernorm", "triton")) %}'
            '{% if v == "above" %}behind{% else %}not behind{% endif %}\n')
    assert render_text(tmp_path, text).text == "behind"


def test_a_typed_number_in_the_template_is_refused(tmp_path):
    with pytest.raises(PipelineError) as e:
        render_text(tmp_path, 'Ours {{ kernel("layernorm") }} µs,\nabout 69 µs before.\n')
    assert str(e.value) == (f"{tmp_path / 'note.md'}: line 2: the number '69' is typed by hand; a number in a note "
                            "comes from the evidence, through an expression")


def test_a_value_the_evidence_lacks_names_the_line(tmp_path):
    with pytest.raises(PipelineError, match=r"note.md: line 2: summary of demo: no row for gelu / cuda"):
        render_text(tmp_path, 'fine\n{{ kernel("gelu") }}\n')


def test_the_helpers_the_guide_lists_are_the_templates_and_captures_count_per_cache_state(tmp_path):
    """docs/notes.md lists cold() and ceiling(): a template can call them. count("captures") is per implementation
    by one backend in one cache state, as the control band counts them: a namespace captured warm and cold three
    times each, by two backends, took three captures, not six or twelve."""
    import re

    listed = set(re.findall(r"^\| `(\w+)\(", (Path(__file__).parents[1] / "docs" / "notes.md").read_text(), re.M))
    template = tmp_path / "note.md"
    template.write_text("".join(f"{{{{ {name} is defined }}}} " for name in sorted(listed)))
    cs = pd.DataFrame({"op": "layernorm", "subject": "cuda", "cache": (["warm"] * 3 + ["cold"] * 3) * 2,
                       "backend": ["nsys"] * 6 + ["cupti"] * 6})
    spans = pd.DataFrame({"mode": ["eager"], "op": ["layernorm"], "subject": ["cuda"], "round": [0]})
    evidence = Evidence("demo", {"summary": summary(), "capture_summary": cs, "spans": spans}, {}, {}, {})
    assert set(render(template, evidence, {}, {}).text.split()) == {"True"}
    assert str(evidence.count("captures")) == "3"


def test_a_comparative_word_outside_what_the_evidence_decided_is_refused(tmp_path):
    """"faster" in the prose, or in a branch that is no verdict's, is refused in one line naming file, line and word;
    the same word in a verdict's branch, under a claim or in the original's account passes."""
    for text, line in (("A fine start.\nOurs is faster than Triton.\n", 2),
                       ('{% if has("summary") %}\nit runs near the floor{% endif %}\n', 2),
                       ('One.\n{% set said = "ours is ahead" %}{{ said }}\n', 2)):
        with pytest.raises(PipelineError) as e:
            render_text(tmp_path, text)
        assert str(e.value).startswith(f"{tmp_path / 'note.md'}: line {line}: ")
        assert "compares, outside a claim or a verdict" in str(e.value)
    claimed = ('{% call claimed("behind Triton", kernel("layernorm"), ">", kernel("layernorm", "triton")) %}'
               'Ours is slower than Triton.{% endcall %}\n')
    assert render_text(tmp_path, claimed).text == "Ours is slower than Triton."
    with pytest.raises(PipelineError, match="claim 'ahead' is false"):
        render_text(tmp_path, claimed.replace('"behind Triton"', '"ahead"').replace('">"', '"<"'))


def test_one_sentence_over_two_namespaces_whose_evidence_disagrees_words_each_truly(tmp_path):
    """A template rendered over two runs: where the span rose while the kernel fell, it does not say the span
    follows the kernel (field note 004 on the H200)."""
    text = ('{% set k = verdict("kernel", kernel("layernorm"), kernel("layernorm", ns="before")) %}'
            '{% set s = verdict("span", span("layernorm"), span("layernorm", ns="before")) %}'
            '{% if k == s %}The span follows the kernel.{% else %}The span does not follow the kernel.{% endif %}\n')
    template = tmp_path / "note.md"
    template.write_text(text)
    before = pd.DataFrame({"op": ["layernorm"], "implementation": ["cuda"], "kernel_us": [6.97],
                           "kernel_low_us": [6.96], "kernel_high_us": [6.98], "span_mean_us": [27.11],
                           "span_round_min_us": [26.9], "span_round_max_us": [27.3]})
    said = []
    for span, low, high in ((20.0, 19.8, 20.2), (37.45, 37.1, 37.8)):  # fell with the kernel; rose against it
        now = summary().assign(span_mean_us=span, span_round_min_us=low, span_round_max_us=high)
        evidence = Evidence("demo", {"summary": now}, {}, {"before": {"summary": before}}, {})
        said.append(render(template, evidence, {}, {}).text)
    assert said == ["The span follows the kernel.", "The span does not follow the kernel."]


def test_the_guide_prints_the_comparative_words_the_lint_knows():
    from fieldnote.publish.authored import COMPARATIVE

    guide = (Path(__file__).parents[1] / "docs" / "notes.md").read_text()
    listed = guide.split("<!-- comparative words -->")[1].split("<!-- end -->")[0]
    assert re.findall(r"`([^`]+)`", listed) == list(COMPARATIVE)
