"""A real KiCad 10.0.7 for the tests: Debian sid's ``kicad`` in a chroot beside the host's KiCad 9.

KiCad 10 is only in Debian sid; this machine is bookworm.  ``.ci/kicad10`` builds a minimal sid
chroot (``debootstrap --variant=minbase sid``) with ``kicad`` and ``kicad-demos`` 10.0.7 in it,
once, at :data:`ROOT10` (``$ACCEL_DRC_KICAD10_ROOT``, default
``/var/cache/accel-drc/kicad10-sid``: outside every clone, so CI reuses it).  Tests run KiCad 10's
``python3`` (with its ``pcbnew`` module) and ``kicad-cli`` through ``chroot`` (root only; CI runs
as root).  A board from the host is copied into the chroot's ``/tmp`` first; a board that is
already inside the chroot (the 10.0.7 demos) is used in place.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from pathlib import Path

#: the chroot that holds Debian sid's KiCad 10 (built by .ci/kicad10)
ROOT10 = Path(os.environ.get("ACCEL_DRC_KICAD10_ROOT", "/var/cache/accel-drc/kicad10-sid"))
#: written by .ci/kicad10 once kicad and kicad-demos are installed in the chroot
READY = ROOT10 / "etc" / "accel-drc-kicad10-ready"
#: the 10.0.7 demo boards, as the host sees them
DEMO_DIR10 = ROOT10 / "usr" / "share" / "kicad" / "demos"


def available() -> tuple[bool, str]:
    """(usable, why not): the chroot is built and this process may ``chroot`` into it."""
    if not READY.is_file():
        return False, f"no KiCad 10 chroot at {ROOT10} (run .ci/kicad10 as root)"
    if os.geteuid() != 0:
        return False, "running KiCad 10 in its chroot needs root"
    return True, ""


def version() -> str:
    """KiCad 10's own version string (``kicad-cli version``)."""
    return run(["/usr/bin/kicad-cli", "version"], timeout=120).stdout.strip()


def inside(path: Path) -> str:
    """The path KiCad 10 sees for a host file: in place if it is inside the chroot, otherwise a
    copy (with the ``.kicad_pro`` and ``.kicad_dru`` beside it) in the chroot's ``/tmp``."""
    path = Path(path).resolve()
    try:
        return "/" + str(path.relative_to(ROOT10.resolve()))
    except ValueError:
        pass
    tag = hashlib.sha256(str(path).encode()).hexdigest()[:16]
    dest = ROOT10 / "tmp" / "accel-drc-tests" / tag
    dest.mkdir(parents=True, exist_ok=True)
    for sibling in [path, path.with_suffix(".kicad_pro"), path.with_suffix(".kicad_dru")]:
        if sibling.is_file():
            shutil.copy2(sibling, dest / sibling.name)
    return f"/tmp/accel-drc-tests/{tag}/{path.name}"


def outside(path: str) -> Path:
    """The host path of a file KiCad 10 wrote at ``path`` inside the chroot."""
    return ROOT10 / path.lstrip("/")


def run(cmd: list[str], timeout: float = 900) -> subprocess.CompletedProcess[str]:
    """Run ``cmd`` inside the chroot (a clean environment: no host venv, HOME in /tmp)."""
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": "/tmp/accel-drc-home",
        "LANG": "C.UTF-8",
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    (ROOT10 / "tmp" / "accel-drc-home").mkdir(parents=True, exist_ok=True)
    return subprocess.run(
        [shutil.which("chroot") or "/usr/sbin/chroot", str(ROOT10), *cmd],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        stdin=subprocess.DEVNULL,
    )


def python(script: str, *args: str, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    """KiCad 10's ``/usr/bin/python3 -c script args`` (the interpreter its pcbnew is built for)."""
    return run(["/usr/bin/python3", "-c", script, *args], timeout=timeout)


# -- the KiCad 10 GUI (pcbnew under Xvfb in the chroot) --------------------------------------


def _mountpoint(path: Path) -> bool:
    return subprocess.run(["mountpoint", "-q", str(path)], check=False).returncode == 0


def _mount(args: list[str], target: Path) -> None:
    """``mount ARGS TARGET`` unless ``target`` is a mount point already (idempotent)."""
    target.mkdir(parents=True, exist_ok=True)
    if not _mountpoint(target):
        subprocess.run(["mount", *args, str(target)], check=True, capture_output=True)


def ensure_mounts() -> None:
    """What the GUI needs in the chroot besides ``/proc`` (.ci/kicad10 mounts that): a tmpfs
    on ``/dev/shm`` (Xvfb's shared memory) and ``/dev/pts``.  Idempotent."""
    _mount(["-t", "proc", "proc"], ROOT10 / "proc")
    _mount(["-t", "tmpfs", "shm"], ROOT10 / "dev" / "shm")
    _mount(["--bind", "/dev/pts"], ROOT10 / "dev" / "pts")


def bind_same_path(host_dir: Path) -> Path:
    """Make ``host_dir`` visible inside the chroot at the *same* path (a bind mount), so a path
    KiCad 10 reports (the board, the socket, the plugin folder) is also right on the host, and
    host-side tests and tools use it as is.  Idempotent; returns the mount point."""
    host_dir = Path(host_dir).resolve()
    target = ROOT10 / str(host_dir).lstrip("/")
    _mount(["--bind", str(host_dir)], target)
    return target


def unbind(host_dir: Path) -> None:
    """Undo :func:`bind_same_path` (a no-op when it is not mounted), and remove the mount
    point and its parents inside the chroot while they are empty (nothing else's files)."""
    target = ROOT10 / str(Path(host_dir).resolve()).lstrip("/")
    if _mountpoint(target):
        subprocess.run(["umount", "-l", str(target)], check=False, capture_output=True)
    stop = ROOT10 / "tmp"
    while target != stop and stop in target.parents and not _mountpoint(target):
        try:
            target.rmdir()  # only an empty folder goes
        except OSError:
            break
        target = target.parent


def chroot_command(cmd: list[str]) -> list[str]:
    """``cmd`` run inside the chroot."""
    return [shutil.which("chroot") or "/usr/sbin/chroot", str(ROOT10), *cmd]
