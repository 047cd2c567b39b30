#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Fetch real NVIDIA libraries from Debian's archive into a cache, for the
tests that check lazynccl against the real thing (docs/concepts/testing.md).

    tests/fetch_real.py [--cache DIR] [--quiet]
    tests/fetch_real.py --bullseye [--quiet]

Debian packages them: CUDA 12.4's NVRTC, its builtins and nvJitLink
(trixie non-free), NCCL 2.22.3 (trixie contrib), CUDA 11.8's NVRTC (bookworm
non-free), trixie's C library (NCCL 2.22.3 needs glibc 2.38) and the arm64
builds for the aarch64 tests. apt-get runs with a private configuration
(its own sources list, lists and archive directories under the cache), and
every package is unpacked with dpkg -x into DIR/<arch>/<package>/: nothing
is installed into /. The cache is complete when DIR/complete exists; a
second run then does nothing. Exit status 0 when the cache is complete, 1
when the archive could not be reached or a package is missing (the message
says which); the tests that need the cache then skip, saying so.

With --bullseye: a Debian 11 root (glibc 2.31, python3, libjemalloc2) made
once by debootstrap (--variant=minbase) into DIR/../bullseye, for the tests
of lazynccl-run on a glibc without glibc.rtld.optional_static_tls
(docs/concepts/the-same-job.md, "Static TLS"). Built in a scratch directory and renamed
when whole; it needs root (debootstrap, and chroot to use it).
"""

import argparse
import os
import shutil
import subprocess
import sys

SOURCES = """\
deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian trixie main contrib non-free
deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian bookworm non-free
"""

# package name -> architectures. The set the suite uses; keep it in step
# with docs/concepts/testing.md.
PACKAGES = {
    "libnvrtc12": ["amd64", "arm64"],
    "libnvrtc-builtins12.4": ["amd64", "arm64"],
    "libnvjitlink12": ["amd64", "arm64"],
    "libnccl2": ["amd64", "arm64"],
    "libnccl-dev": ["amd64"],
    "libnvrtc11.2": ["amd64"],
    "libnvrtc-builtins11.8": ["amd64"],
    "libc6": ["amd64", "arm64"],
    "libelf1t64": ["arm64"],
    "zlib1g": ["arm64"],
    "libzstd1": ["arm64"],
    "libgcc-s1": ["arm64"],
    "libstdc++6": ["arm64"],
}


def default_cache():
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "lazynccl", "debian")


def cache_dir():
    return os.environ.get("LZ_REAL_CACHE") or default_cache()


def bullseye_dir():
    return os.path.join(os.path.dirname(cache_dir()), "bullseye")


def bullseye(quiet):
    root = bullseye_dir()
    if os.path.exists(os.path.join(root, "usr", "bin", "python3")):
        return 0
    if not shutil.which("debootstrap") or os.geteuid() != 0:
        print("fetch_real: a bullseye root needs debootstrap and root", file=sys.stderr)
        return 1
    scratch = root + ".partial"
    shutil.rmtree(scratch, ignore_errors=True)
    out = subprocess.DEVNULL if quiet else None
    r = subprocess.run(["debootstrap", "--variant=minbase", "--include=python3,libjemalloc2",
                        "bullseye", scratch, "http://deb.debian.org/debian"],
                       stdout=out, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        print("fetch_real: debootstrap bullseye failed:\n" + r.stderr.strip()[-2000:], file=sys.stderr)
        return 1
    os.rename(scratch, root)
    return 0


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cache", default=cache_dir())
    ap.add_argument("--quiet", action="store_true")
    ap.add_argument("--bullseye", action="store_true")
    a = ap.parse_args(argv)
    if a.bullseye:
        return bullseye(a.quiet)
    cache = os.path.abspath(a.cache)
    if os.path.exists(os.path.join(cache, "complete")):
        return 0
    if not shutil.which("apt-get") or not shutil.which("dpkg"):
        print("fetch_real: apt-get and dpkg are needed (a Debian system)", file=sys.stderr)
        return 1
    apt = os.path.join(cache, "apt")
    for d in ("lists/partial", "archives/partial"):
        os.makedirs(os.path.join(apt, d), exist_ok=True)
    with open(os.path.join(apt, "sources.list"), "w") as f:
        f.write(SOURCES)
    opts = [f"-oDir::Etc::SourceList={apt}/sources.list", "-oDir::Etc::SourceParts=/dev/null",
            f"-oDir::State::Lists={apt}/lists", f"-oDir::Cache::Archives={apt}/archives",
            "-oDir::Cache::pkgcache=", "-oDir::Cache::srcpkgcache=",
            "-oAPT::Architectures=amd64,arm64", "-oAPT::Sandbox::User=root",
            "-oAcquire::Retries=2"]
    out = subprocess.DEVNULL if a.quiet else None
    r = subprocess.run(["apt-get", *opts, "update"], stdout=out, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        print("fetch_real: Debian's archive could not be reached (apt-get update failed):\n"
              + r.stderr.strip(), file=sys.stderr)
        return 1
    names = [f"{p}:{arch}" for p, archs in PACKAGES.items() for arch in archs]
    work = os.path.join(apt, "download")
    os.makedirs(work, exist_ok=True)
    r = subprocess.run(["apt-get", *opts, "download", *names], cwd=work, stdout=out,
                       stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        print("fetch_real: apt-get download failed:\n" + r.stderr.strip(), file=sys.stderr)
        return 1
    versions = []
    for deb in sorted(os.listdir(work)):
        if not deb.endswith(".deb"):
            continue
        pkg, version, arch = deb[:-4].split("_")
        dest = os.path.join(cache, arch, pkg)
        shutil.rmtree(dest, ignore_errors=True)
        os.makedirs(dest)
        subprocess.run(["dpkg", "-x", os.path.join(work, deb), dest], check=True)
        versions.append(f"{pkg} {arch} {version.replace('%3a', ':')}")
        os.unlink(os.path.join(work, deb))
    missing = [n for n in names if not os.path.isdir(os.path.join(cache, n.split(":")[1],
                                                                  n.split(":")[0]))]
    if missing:
        print("fetch_real: not unpacked: " + ", ".join(missing), file=sys.stderr)
        return 1
    with open(os.path.join(cache, "complete"), "w") as f:
        f.write("\n".join(versions) + "\n")
    if not a.quiet:
        print(f"fetch_real: {len(versions)} packages in {cache}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
