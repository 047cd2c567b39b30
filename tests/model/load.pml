/* SPDX-License-Identifier: MIT
 *
 * A model of the load protocol of src/lz_load.c, src/lz_resolve.c and
 * src/lz_ld.c (one library), checked by spin in the test suite
 * (tests/test_model.py; docs/reliability.md, "The load protocol").
 *
 * -DCALLERS=n sets the number of first-calling threads (1 by default);
 * -DNO_PLUGIN, -DNO_FIXER, -DNO_FORK, -DNO_CANCEL leave an actor out, so
 * that each bug of the old protocol is shown on its own.
 *
 * Built as is, it models today's protocol; with -DOLD, the protocol the
 * runtime had when issue 13 was filed: the library's lock held across the
 * search (and its dlopen), the status read before the lock when a failure
 * is published, cancellation enabled inside the search, and a fork child
 * that simply starts again. spin must find a violation in OLD and none here.
 *
 * Actors: a thread making a first call; a thread that dlopens a
 * plugin whose constructor makes a first call (it holds the dynamic
 * linker's lock meanwhile); a thread that fixes the installation and
 * retries (lazynccl_load after a failure); fork() at any moment, the child
 * then making its own first call. A searcher's own dlopen may run a
 * constructor that calls back into the shim. Any searcher may be cancelled
 * at a cancellation point (dlopen) when its cancellation is enabled.
 *
 * Invariants:
 *   I1 one load per generation: the library is published at most once, and
 *      once loaded it stays loaded;
 *   I2 no failure published after a success (a slot never holds the
 *      failure stub while the library is loaded);
 *   I3 no deadlock (spin's invalid end states), and every first call ends;
 *   I4 a forked child never uses, nor calls dlopen over, a half-loaded
 *      object.
 */

#define UNTRIED 0
#define LOADED  1
#define FAILED  2
#define REENTERED 3

#define RESOLVER 0
#define REAL     1
#define FAIL     2

#ifndef CALLERS
#define CALLERS 1
#endif
#define NPROC (CALLERS + 4)

byte status = UNTRIED;
byte slot = RESOLVER;      /* one export's slot */
byte gen = 0;
byte loads = 0;            /* publications of LOADED */
byte obj = 0;              /* the library object: 0 none, 1 half-loaded, 2 loaded */
bool present = false;      /* is the library installed? (the retry installs it) */

/* The library's lock (st->mu), plain; the dynamic linker's lock, recursive. */
byte mu = 0;
byte ld = 0;
byte ld_depth = 0;

/* Searches running, and who runs them (st->loaders, st->active). */
byte loaders = 0;
bool searching[NPROC];
/* Our threads inside the dynamic linker (lz_ld.c's gate_open), and fork. */
byte gate_open = 0;
bool fork_pending = false;
bool forked = false;

/* A snapshot taken at fork(): what the child inherits. */
byte c_status, c_obj, c_gate;
bool c_mid_ld;

inline lock_mu() { atomic { mu == 0 -> mu = _pid + 1 } }
inline unlock_mu() { assert(mu == _pid + 1); mu = 0 }

inline ld_acquire() {
    atomic { (ld == 0 || ld == _pid + 1) -> ld = _pid + 1; ld_depth++ }
}
inline ld_release() {
    atomic { ld_depth--; if :: ld_depth == 0 -> ld = 0 :: else -> skip fi }
}

#ifdef OLD
bool loading = false;
byte loader = 0;
#define loading_self (loading && loader == _pid + 1)
#endif

/* A window of lz_ld.c around a call into the dynamic linker. */
#ifdef OLD
inline enter() { skip }
inline leave() { skip }
#else
inline enter() { atomic { (!fork_pending) -> gate_open++ } }  /* bounded: see forker */
inline leave() { gate_open-- }
#endif

/* A cancellation point: with cancellation enabled, the thread may end
 * here, whatever it holds. */
#ifdef NO_CANCEL
inline cancel_point(can) { skip }
#else
inline cancel_point(can) {
    if
    :: can -> goto cancelled
    :: true -> skip
    fi
}
#endif

/* dlopen of the library by a searcher. found: it was there. The
 * constructor may call back into the shim (reenter). */
inline dlopen_lib(found, cancel_on) {
    enter();
    cancel_point(cancel_on);
    ld_acquire();
    if
    :: present ->
        if
        :: obj == 0 -> obj = 1;
           /* the library's constructor, with the dynamic linker locked */
           reenter();
           obj = 2
        :: obj == 2 -> skip
        fi;
        found = true
    :: else -> found = false
    fi;
    ld_release();
    leave()
}

/* A call from inside our own load must get the failure value at once. */
inline reenter() {
#ifdef OLD
    assert(loading_self)
#else
    atomic { assert(searching[_pid]) }
#endif
}

#ifdef OLD
/* Issue 13's protocol: the lock held across the whole search. */
inline ensure_loaded(result) {
    if
    :: atomic { status != UNTRIED -> result = status }
    :: atomic { else -> skip };
        if
        :: loading_self -> result = REENTERED
        :: else ->
            lock_mu();
            if
            :: status == UNTRIED && !loading ->
                loading = true; loader = _pid + 1;
                dlopen_lib(found, true);
                loading = false; loader = 0;
                if
                :: found -> loads++; assert(loads <= 1); status = LOADED; assert(slot != FAIL)  /* I1, I2 */
                :: else -> status = FAILED
                fi
            :: else -> skip
            fi;
            result = status;
            unlock_mu()
        fi
    fi
}

inline first_call() {
    ensure_loaded(res);
    if
    :: res == LOADED -> lock_mu(); if :: slot == RESOLVER -> slot = REAL :: else -> skip fi; unlock_mu()
    :: res == FAILED -> lock_mu(); if :: slot == RESOLVER -> slot = FAIL; assert(status != LOADED)  /* I2 */ :: else -> skip fi; unlock_mu()
    :: res == REENTERED -> skip
    fi
}

inline retry() {
    lock_mu();
    if
    :: status == FAILED -> slot = RESOLVER; status = UNTRIED
    :: else -> skip
    fi;
    unlock_mu();
    ensure_loaded(res)
}
#else

/* Today's protocol (lz_ensure_loaded): no lock across the search; wait for
 * another searcher only while no thread of ours is in the dynamic linker;
 * publish once per generation. Cancellation is disabled throughout. */
inline ensure_loaded(result) {
    may_wait = true;
    do
    :: atomic { status != UNTRIED -> result = status }; break   /* one acquire load */
    :: else ->
        lock_mu();
        if
        :: searching[_pid] -> result = REENTERED; unlock_mu(); break
        :: status != UNTRIED -> unlock_mu()
        :: status == UNTRIED && loaders > 0 && may_wait ->
            unlock_mu();
            /* lz_ld_wait */
            (status != UNTRIED || loaders == 0 || gate_open > 0);
            may_wait = (gate_open == 0)
        :: status == UNTRIED && !(loaders > 0 && may_wait) ->
            searching[_pid] = true; loaders++; mygen = gen;
            unlock_mu();
            dlopen_lib(found, false);
            lock_mu();
            searching[_pid] = false; loaders--;
            if
            :: mygen == gen && status == UNTRIED ->
                if
                :: found -> loads++; assert(loads <= 1); status = LOADED; assert(slot != FAIL)  /* I1, I2 */
                :: else -> status = FAILED
                fi;
                result = status; unlock_mu(); break
            :: else -> unlock_mu(); may_wait = true  /* lost, or stale: again */
            fi
        fi
    od
}

inline first_call() {
    do
    :: ensure_loaded(res);
       if
       :: res == LOADED ->
          atomic { if :: slot == RESOLVER -> slot = REAL :: else -> skip fi }; break
       :: res == REENTERED -> break
       :: res == FAILED ->
          /* lz_publish_failure: under the lock, only if still failed */
          lock_mu();
          if
          :: status == FAILED ->
             if :: slot == RESOLVER -> slot = FAIL; assert(status != LOADED)  /* I2 */ :: else -> skip fi;
             unlock_mu(); break
          :: else -> unlock_mu()
          fi
       fi
    od
}

inline retry() {
    lock_mu();
    if
    :: status == FAILED -> slot = RESOLVER; gen++; loads = 0; status = UNTRIED
    :: else -> skip
    fi;
    unlock_mu();
    ensure_loaded(res)
}
#endif

#define LOCALS bool found; byte res; bool may_wait; byte mygen

active [CALLERS] proctype caller()
{
    LOCALS;
    first_call();
cancelled:
    skip
}

#ifndef NO_PLUGIN
/* A thread dlopens a plugin: the dynamic linker's lock is held while the
 * plugin's constructor makes a first call. */
active proctype plugin()
{
    LOCALS;
    ld_acquire();
    first_call();
    ld_release();
cancelled:
    skip
}
#endif

#ifndef NO_FIXER
/* The installation is fixed, then the program retries. */
active proctype fixer()
{
    LOCALS;
    present = true;
    retry();
cancelled:
    skip
}
#else
init { present = true }
#endif

#ifndef NO_FORK
/* fork() at any moment; the child has only the forking thread. */
active proctype forker()
{
    LOCALS;
    /* prefork: wait until no window is open, or give up (the bound) */
#ifndef OLD
    if
    :: atomic { gate_open == 0 -> fork_pending = true }
    :: atomic { fork_pending = true }   /* timed out */
    fi;
#endif
    atomic {
        c_status = status; c_obj = obj; c_gate = gate_open;
        c_mid_ld = (ld != 0 && ld != _pid + 1 && obj == 1) || c_gate > 0;
        forked = true;
#ifndef OLD
        fork_pending = false
#endif
    };
    /* the child's first call */
    if
    :: c_status == LOADED -> assert(c_obj == 2)
    :: else ->
#ifdef OLD
       /* it starts again: dlopen over whatever the parent left */
       assert(c_obj != 1)
#else
       /* lz_ld_child: refuse if a window was open or ld.so mid-change */
       if
       :: c_mid_ld -> skip                 /* fails with a message, no dlopen */
       :: else -> assert(c_obj != 1)
       fi
#endif
    fi;
cancelled:
    skip
}
#endif
