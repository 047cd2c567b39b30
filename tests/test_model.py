#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The load protocol's model (tests/model/load.pml) checked by spin: today's
protocol keeps its invariants in every configuration, and the protocol of
the first protocol breaks one in each configuration that shows one of its bugs."""
import os
import re
import shutil

import lztest as t
from lztest import case

MODEL = os.path.join(t.SOURCE, "tests", "model", "load.pml")


def verify(name, defines):
    """Run spin's exhaustive safety check: (errors, what the trail shows, states)."""
    if t.SANITIZE not in ("", "none"):
        raise t.Skip("the model checks the protocol, not this build's code: the default build runs it")
    spin = shutil.which("spin")
    if not spin:
        raise t.Skip("spin is not installed (Debian package spin; .ci/run installs it)")
    d = t.workdir(f"model_{name}")
    shutil.copy(MODEL, d)
    t.run([spin] + defines + ["-a", "load.pml"], cwd=d, check_rc=0)
    t.run(["cc", "-O2", "-DSAFETY", "-DMEMLIM=4096", "-o", "pan", "pan.c"], cwd=d, check_rc=0)
    r = t.run(["./pan", "-m100000"], cwd=d)
    m = re.search(r"errors: (\d+)", r.stdout)
    if not m:
        raise t.Fail(f"pan printed no verdict:\n{r.stdout}\n{r.stderr}")
    states = re.search(r"([\d.e+]+) states, stored", r.stdout)
    what = re.search(r"pan:1: (.*?) \(at depth", r.stdout)
    if m.group(1) != "0" and os.path.exists(os.path.join(d, "load.pml.trail")):
        trail = t.run([spin] + defines + ["-t", "load.pml"], cwd=d).stdout
        a = re.search(r"text of failed assertion: (.*)", trail)
        what_text = a.group(1) if a else (what.group(1) if what else "?")
    else:
        what_text = what.group(1) if what else ""
    print(f"{name}: errors {m.group(1)}, {states.group(1) if states else '?'} states; {what_text}")
    return int(m.group(1)), what_text


def holds(name, defines):
    errors, what = verify(name, defines)
    t.equal(errors, 0, f"today's protocol, {name}: {what}")


def broken(name, defines, want, protocol):
    """spin finds the invariant want names broken in protocol."""
    errors, what = verify(name, defines)
    t.equal(errors > 0, True, f"{protocol}, {name}, passes: the model lost the bug")
    t.contains(what, want, f"{protocol}, {name}")


def breaks(name, defines, want):
    broken(name, ["-DOLD"] + defines, want, "the old protocol")


@case
def model_holds_all_actors():
    """A first call, a plugin constructor under the loader lock, a fix and
    retry, a fork at any step: no invariant broken, no deadlock."""
    holds("all", [])


@case
def model_holds_three_callers_retry():
    """Three first calls racing a retry after a failure."""
    holds("callers3_retry", ["-DCALLERS=3", "-DNO_FORK", "-DNO_PLUGIN"])


@case
def model_holds_two_callers_plugin():
    """Two first calls and a plugin constructor calling back under the loader lock."""
    holds("callers2_plugin", ["-DCALLERS=2", "-DNO_FORK", "-DNO_FIXER"])


@case
def model_holds_a_holder_waiting_for_a_caller():
    """A thread holding the dynamic linker's lock waits for caller 0's
    first call to end (a join, a condition variable), beside a second
    caller and a plugin constructor: the call ends with the failure value,
    nothing deadlocks (I3)."""
    holds("waiter", ["-DWAITER", "-DCALLERS=2", "-DNO_FORK", "-DNO_FIXER"])


@case
def model_waiting_for_the_lock_deadlocks_with_its_holder():
    """The same holder, with a first call that only waits for the lock
    (no lz_ldlock_wait): spin finds the deadlock (I3)."""
    broken("waiter_nocheck", ["-DWAITER", "-DNO_LDLOCK_CHECK", "-DNO_FORK", "-DNO_FIXER", "-DNO_PLUGIN"],
           "invalid end state", "a first call that waits for the lock")


@case
def model_holds_a_holder_after_the_look():
    """The holder takes the lock at any moment, also after the first call
    looked at it and before the search's dlopen, beside a second caller:
    each call of the search into the dynamic linker takes the lock first,
    or ends (I3)."""
    holds("waiter_late", ["-DWAITER", "-DWAITER_LATE", "-DCALLERS=2", "-DNO_FORK", "-DNO_FIXER",
                          "-DNO_PLUGIN"])


@case
def model_a_look_only_deadlocks_with_a_late_holder():
    """The same holder against a first call that only looks at the lock
    when it begins (lz_ldlock_wait) and lets dlopen wait for it: spin finds
    the deadlock of a holder that takes it between the look and the
    search's dlopen (I3)."""
    broken("waiter_late_look", ["-DWAITER", "-DWAITER_LATE", "-DLOOK_ONLY", "-DNO_FORK", "-DNO_FIXER",
                                "-DNO_PLUGIN"],
           "invalid end state", "a first call that only looks at the lock")


@case
def model_closing_a_stale_search_loads_twice():
    """A retry's failure racing a search's success: with every losing search
    closing its handle (the runtime before this was fixed), the library is
    unloaded and its constructor runs again (I3); today's keeps a stale
    search's handle (model_holds_three_callers_retry holds I3)."""
    broken("close_stale", ["-DCALLERS=3", "-DNO_FORK", "-DNO_PLUGIN", "-DNO_CANCEL", "-DCLOSE_STALE"],
           "ctors<=1", "closing stale searches")


@case
def model_fill_before_publish_holds():
    """The fill step (I6): first calls racing, a plugin constructor under the
    loader lock, fork at any step of the commit: no call reaches the library
    before its variables hold its values."""
    holds("fill_callers2_fork", ["-DCALLERS=2", "-DNO_FIXER", "-DNO_PLUGIN"])
    holds("fill_callers2_plugin", ["-DCALLERS=2", "-DNO_FORK", "-DNO_FIXER"])


@case
def model_fill_after_publish_calls_unfilled_library():
    """Variables filled after the status says loaded (the runtime before the
    fill moved into the publication): another first call reaches the
    library while its variables are the shim's zeros (I6)."""
    broken("fill_late", ["-DCALLERS=2", "-DNO_FORK", "-DNO_PLUGIN", "-DNO_FIXER", "-DFILL_LATE"],
           "filled==2", "filling after publishing")


@case
def model_fork_child_must_finish_the_commit():
    """A child forked half-way through a commit that does not finish it
    (its own commit leaves a half-copied variable alone) calls the library
    with a variable half-filled (I6)."""
    broken("fill_fork", ["-DNO_PLUGIN", "-DNO_FIXER", "-DNO_CANCEL", "-DNO_FORK_FINISH"],
           "c_filled==2", "a child that does not finish the commit")


@case
def model_old_deadlocks_on_loader_lock():
    """Item 4: the shim's lock held across dlopen deadlocks with a plugin constructor."""
    breaks("old_plugin", ["-DNO_FIXER", "-DNO_FORK", "-DNO_CANCEL"], "invalid end state")


@case
def model_old_publishes_failure_after_success():
    """Item 3: a failure read before the lock is published over a retry's success."""
    breaks("old_retry", ["-DNO_PLUGIN", "-DNO_FORK", "-DNO_CANCEL"], "status!=1")


@case
def model_old_child_uses_half_loaded_object():
    """Item 2: a child forked mid-dlopen calls dlopen over a half-loaded object."""
    breaks("old_fork", ["-DNO_PLUGIN", "-DNO_FIXER", "-DNO_CANCEL"], "c_obj!=1")


@case
def model_old_cancel_leaves_lock_held():
    """Item 6: a thread cancelled inside its load leaves the lock held."""
    breaks("old_cancel", ["-DCALLERS=2", "-DNO_PLUGIN", "-DNO_FIXER", "-DNO_FORK"],
           "invalid end state")


@case
def model_copies_hold():
    """two runtime copies, a thread loading both, fork at any step
    as glibc 2.36 runs it, the child calling both: no wait for a thread the
    child does not have, no dlopen over a linker mid-change."""
    holds("copies", ["-DCOPIES"])


@case
def model_copies_old_child_hangs():
    """with handlers installed at a copy's first call and the child
    trusting them, a copy registered during fork's prepare phase keeps its
    parent's search in the child, which waits for it forever."""
    breaks("copies_old", ["-DCOPIES"], "invalid end state")


@case
def model_audit_holds():
    """The audit decision (the requester's cookie): a
    by-path preload, another copy loaded by path, the drop-in's own load
    (respelled where ld.so knows the drop-in by that path), a tool
    re-opening the library before and after the first call, fork: the
    drop-in never gets itself, the tool gets the copy in use after the
    first load, one real copy in parent and child."""
    holds("audit", ["-DAUDIT"])
    holds("audit_libpath", ["-DAUDIT", "-DLIBPATH"])


@case
def model_audit_first_rule_hands_tools_the_dropin():
    """the first module's rule (every request from a program gets
    the drop-in) hands a tool re-opening the loaded library by another path
    the drop-in instead of the copy in use."""
    broken("audit_first_rule", ["-DAUDIT", "-DFIRST_RULE"], "got==loaded", "the first audit rule")


@case
def model_audit_naive_loads_itself():
    """the naive module (every by-path request redirected) hands
    the drop-in its own object for the real library: the hang."""
    breaks("audit_naive", ["-DAUDIT"], "got!=3")


if __name__ == "__main__":
    raise SystemExit(t.main())
