"""Every own kernel is checked at every version of its operator, with every attribute of that version set at
least once; a version the schema marks deprecated may instead have a case showing it refused."""
from __future__ import annotations

import pytest

from explorer.executor import ops
from explorer.spec.schema import schema_at

from .collect import all_cases
from .gen import since_versions

# ops whose family has no differential cases yet: explorer's kernels that reuse onnx.reference's under other
# attributes, until their families own them
NOT_YET_DIFFERENTIAL: set[str] = set()

OWNED = sorted(key for key in ops.KERNELS if key[1] not in NOT_YET_DIFFERENTIAL)


@pytest.mark.parametrize("domain, op", OWNED, ids=lambda k: k or "")
def test_every_version_and_attribute_has_a_case(domain, op):
    judged = [c for c in all_cases() if c.op == op and c.domain == domain and c.error is None]
    missing_versions, missing_attributes = [], []
    for version in since_versions(op, domain):
        schema = schema_at(op, version, domain)
        if schema is not None and schema.deprecated and any(
                c.op == op and c.domain == domain and c.version == version and c.error for c in all_cases()):
            continue
        at = [c for c in judged if c.version == version]
        if not at:
            missing_versions.append(version)
            continue
        assert schema is not None
        unset = sorted(set(schema.attributes) - {name for c in at for name in c.attrs})
        if unset:
            missing_attributes.append(f"{op}-{version}: {unset}")
    assert not missing_versions, f"{op}: no case at version(s) {missing_versions}"
    assert not missing_attributes, f"attributes never set: {missing_attributes}"


def test_cases_name_real_versions():
    for case in all_cases():
        assert case.version in since_versions(case.op, case.domain), f"{case.op}-{case.version} is no since_version"
