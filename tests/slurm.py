# SPDX-License-Identifier: MIT
"""A single-node Slurm for the suite (shared/slurm-single-node.md's facts):
munge, slurmctld and slurmd from Debian's packages, a slurm.conf in a
temporary directory, the daemons stopped by PID at the end. Raises
lztest.Skip with the reason where they cannot start, never silently."""
import contextlib
import fcntl
import os
import shutil
import signal
import socket
import subprocess
import time

import lztest as t


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _stop(procs):
    for p in procs:
        if p.poll() is None:
            p.terminate()
    deadline = time.time() + 5
    for p in procs:
        try:
            p.wait(max(0.1, deadline - time.time()))
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def _stop_pidfile(path):
    try:
        pid = int(open(path).read().strip())
    except (OSError, ValueError):
        return
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            return
        time.sleep(0.5)


@contextlib.contextmanager
def cluster(d):
    """Yields the environment a client needs (SLURM_CONF)."""
    for tool in ("slurmctld", "slurmd", "srun", "sbatch", "munged", "sinfo"):
        if not shutil.which(tool) and not os.path.exists(f"/usr/sbin/{tool}"):
            raise t.Skip(f"{tool} is not installed (Debian's slurm-wlm and munge)")
    if os.geteuid() != 0:
        raise t.Skip("the single-node Slurm runs its daemons as root")
    if not os.path.exists("/etc/munge/munge.key"):
        raise t.Skip("/etc/munge/munge.key is missing (the munge package creates it)")
    os.makedirs(d, exist_ok=True)
    # One cluster at a time on this machine: two would share munged (one
    # socket), and the first to end would stop it under the other.
    lock = open("/run/lazynccl-test-slurm.lock", "w")
    fcntl.flock(lock, fcntl.LOCK_EX)
    os.makedirs("/run/munge", exist_ok=True)
    shutil.chown("/run/munge", "munge", "munge")
    munge_pid = f"/run/munge/lazynccl-test-{os.getpid()}.pid"
    started_munge = False
    if subprocess.run("munge -n | unmunge", shell=True, capture_output=True).returncode != 0:
        r = subprocess.run(["runuser", "-u", "munge", "--", "/usr/sbin/munged", f"--pid-file={munge_pid}"],
                           capture_output=True, text=True)
        if r.returncode != 0:
            raise t.Skip(f"munged would not start: {r.stderr.strip()}")
        started_munge = True
    procs = []
    try:
        for i in range(50):
            if subprocess.run("munge -n | unmunge", shell=True, capture_output=True).returncode == 0:
                break
            time.sleep(0.1)
        else:
            raise t.Skip("munge does not answer (munge -n | unmunge)")
        conf = os.path.join(d, "slurm.conf")
        for sub in ("state", "spool", "log"):
            os.makedirs(os.path.join(d, sub), exist_ok=True)
        with open(conf, "w") as f:
            f.write(f"""ClusterName=lazynccl
SlurmctldHost=localhost
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SwitchType=switch/none
ReturnToService=2
SlurmctldPort={_free_port()}
SlurmdPort={_free_port()}
StateSaveLocation={d}/state
SlurmdSpoolDir={d}/spool
SlurmctldLogFile={d}/log/slurmctld.log
SlurmdLogFile={d}/log/slurmd.log
SlurmctldPidFile={d}/slurmctld.pid
SlurmdPidFile={d}/slurmd.pid
NodeName=localhost CPUs={os.cpu_count()}
PartitionName=debug Nodes=localhost Default=YES OverSubscribe=YES State=UP
""")
        env = dict(os.environ, SLURM_CONF=conf)
        log = open(os.path.join(d, "log", "daemons.out"), "w")
        procs.append(subprocess.Popen(["slurmctld", "-D", "-i", "-f", conf], env=env, stdout=log, stderr=log))
        procs.append(subprocess.Popen(["slurmd", "-D", "-N", "localhost", "-f", conf], env=env,
                                      stdout=log, stderr=log))
        for i in range(120):
            r = subprocess.run(["timeout", "5", "sinfo", "-h", "-o", "%t"], env=env, capture_output=True, text=True)
            if r.stdout.strip() == "idle":
                break
            if any(p.poll() is not None for p in procs):
                break
            time.sleep(0.5)
        else:
            r = None
        if r is None or r.stdout.strip() != "idle":
            tail = open(os.path.join(d, "log", "daemons.out")).read()[-1500:]
            raise t.Skip(f"the single-node Slurm did not come up (sinfo: {r.stdout.strip() if r else '-'}): {tail}")
        yield {"SLURM_CONF": conf}
    finally:
        _stop(procs)
        if started_munge:
            _stop_pidfile(munge_pid)
        lock.close()
