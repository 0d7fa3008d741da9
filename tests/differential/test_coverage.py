"""Every own kernel is checked at every version of its operator, with every attribute of that version set at
least once, by judged cases only (a case whose type onnxruntime lacks counts when it gives a cast or the spec's
value); a version the schema marks deprecated may instead have a case showing it refused."""
from __future__ import annotations

import pytest

from explorer.executor import ops
from explorer.spec.schema import schema_at

from .collect import all_cases, cases_of
from .gen import since_versions
from .harness import Case, has_judge

# ops whose family has no differential cases yet: explorer's kernels that reuse onnx.reference's under other
# attributes, until their families own them
NOT_YET_DIFFERENTIAL: set[str] = set()

OWNED = sorted(key for key in ops.KERNELS if key[1] not in NOT_YET_DIFFERENTIAL)


def judged_attributes(cases: list[Case]) -> tuple[bool, set[str]]:
    """Whether any of the cases is judged, and the attributes the judged ones set. onnxruntime is asked whether it
    has the types of a case of the dtype sweep (the types it may lack) only when the case would add something;
    the other cases are written for types it has (test_differential fails a case it refuses)."""
    judged, names = False, set()
    for case in sorted(cases, key=lambda c: c.dtype_sweep and c.expected is None and c.cast is None):
        if (judged and set(case.attrs) <= names) or case.dtype_sweep and not has_judge(case):
            continue
        judged, names = True, names | set(case.attrs)
    return judged, names


@pytest.mark.parametrize("domain, op", OWNED, ids=lambda k: k or "")
def test_every_version_and_attribute_has_a_case(domain, op):
    cases = [c for c in cases_of(domain, op) if c.error is None]
    missing_versions, missing_attributes = [], []
    for version in since_versions(op, domain):
        schema = schema_at(op, version, domain)
        if schema is not None and schema.deprecated and any(
                c.version == version and c.error for c in cases_of(domain, op)):
            continue
        judged, names = judged_attributes([c for c in cases if c.version == version])
        if not judged:
            missing_versions.append(version)
            continue
        assert schema is not None
        unset = sorted(set(schema.attributes) - names)
        if unset:
            missing_attributes.append(f"{op}-{version}: {unset}")
    assert not missing_versions, f"{op}: no judged case at version(s) {missing_versions}"
    assert not missing_attributes, f"attributes never set: {missing_attributes}"


def test_cases_name_real_versions():
    for case in all_cases():
        assert case.version in since_versions(case.op, case.domain), f"{case.op}-{case.version} is no since_version"
