/* SPDX-License-Identifier: MIT
 *
 * A model of the load protocol of src/load/lz_once.c (with lz_lock.c), src/api/lz_resolve.c and
 * src/base/lz_dl.c (one library), checked by spin in the test suite
 * (tests/test_model.py; docs/concepts/reliability.md, "The load protocol").
 *
 * -DCALLERS=n sets the number of first-calling threads (1 by default);
 * -DNO_PLUGIN, -DNO_FIXER, -DNO_FORK, -DNO_CANCEL leave an actor out, so
 * that each bug of the old protocol is shown on its own.
 *
 * Built as is, it models the protocol; with -DOLD, a
 * simpler protocol: the library's lock held across the
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
 *   I3 no deadlock (spin's invalid end states), and every first call ends,
 *      with -DWAITER too: a thread holding the dynamic linker's lock waits
 *      for caller 0's first call to end (a join, or a condition variable
 *      with every other thread asleep: lz_ldlock.c sees both), and the call
 *      ends with the failure value (BUSY) instead of waiting for the lock.
 *      -DWAITER_LATE lets it take the lock at any moment: each call of the
 *      search into the dynamic linker takes the lock first (trylock) or
 *      ends, so it holds too; with -DLOOK_ONLY (a look when the call
 *      begins, then a dlopen that waits) spin finds the deadlock of a
 *      holder that takes it between the look and the dlopen;
 *      -DNO_LDLOCK_CHECK, a call that only waits for the lock, deadlocks
 *      always;
 *   I4 a forked child never uses, nor calls dlopen over, a half-loaded
 *      object;
 *   I6 no call reaches the library before its variables hold its values
 *      (the fill: prepared by a searcher outside the lock, committed under
 *      it by the search that publishes, before the status says loaded; a
 *      child forked half-way through a commit finishes it in its fork
 *      handler). -DFILL_LATE models the protocol that filled them after
 *      publishing, -DNO_FORK_FINISH a child that does not finish a commit;
 *      spin must find I6 broken in each.
 *
 * Two more models share the file, each selected by a define:
 *   -DCOPIES: two runtime copies (two shims), each with its own
 *      state, window count and fork handlers, one dynamic linker; a thread
 *      loads both in turn; fork() at any step follows glibc 2.36 (handlers
 *      registered after fork's prepare phase began are not run for it); the
 *      child calls both. With -DOLD, the protocol without them (handlers
 *      installed at a copy's first call, the child trusting its handlers).
 *   -DAUDIT: the audit module's decision (la_objsearch)
 *      with a program preloading the real library by path, a CuPy-style load
 *      of another copy by path, the drop-in's own load at its first call
 *      (respelled where ld.so knows the drop-in by the path asked for), a
 *      tool re-opening the library by path before or after the first call,
 *      and fork. With -DOLD, the naive module that redirects every request;
 *      with -DFIRST_RULE, a module that handed every request the
 *      drop-in, even after the real library was loaded (a tool then hooks
 *      the drop-in).
 */


#ifdef COPIES
/* ---- Several runtime copies and fork ---- */
#define UNTRIED 0
#define LOADED  1
#define N 2

byte status[N];            /* each copy's library */
byte loaders[N];           /* st->loaders */
byte gate[N];              /* gate_open: our threads inside dlopen, per copy */
bool pending[N];           /* fork_pending, per copy */
bool registered[N];        /* pthread_atfork done for the copy */
byte ld = 0;               /* a thread inside dlopen: the linker mid-change */
bool forked = false;
/* What the child inherits, and which child handlers glibc runs in it. */
byte c_status[N], c_loaders[N], c_gate[N];
bool c_ran[N];
byte c_ld;

/* A thread makes the first call of copy 0, then of copy 1. */
active proctype loader()
{
    byte i = 0;
#ifndef OLD
    /* Today: each copy installs its handlers when its object is loaded. */
    atomic { registered[0] = true; registered[1] = true }
#endif
    do
    :: i < N ->
#ifdef OLD
       registered[i] = true;      /* pthread_atfork at the copy's first lz_lock */
#endif
       loaders[i]++;              /* under st->mu: a search runs */
       if                         /* enter(): wait while a fork is pending, bounded */
       :: atomic { !pending[i] -> gate[i]++; ld++ }
       :: atomic { gate[i]++; ld++ }     /* the wait timed out */
       fi;
       atomic { ld--; gate[i]-- };      /* dlopen returned */
       atomic { status[i] = LOADED; loaders[i]-- };
       i++
    :: else -> break
    od
}

/* fork() as glibc 2.36 runs it: the handlers to run are those registered
 * when the prepare phase starts; it releases its lock while each runs, so
 * another thread may register meanwhile (not run for this fork). */
active proctype forker()
{
    bool snap[N];
    byte i;
    atomic { snap[0] = registered[0]; snap[1] = registered[1] };
    i = N;
    do                            /* prepare handlers, last registered first */
    :: i > 0 -> i--;
       if
       :: snap[i] ->
          if
          :: atomic { gate[i] == 0 -> pending[i] = true }
          :: pending[i] = true    /* bounded wait expired */
          fi
       :: else -> skip
       fi
    :: else -> break
    od;
    atomic {                      /* _Fork: the child's copy of memory */
        i = 0;
        do
        :: i < N -> c_status[i] = status[i]; c_loaders[i] = loaders[i];
                    c_gate[i] = gate[i]; c_ran[i] = snap[i]; i++
        :: else -> break
        od;
        c_ld = ld;
        forked = true
    };
    i = 0;
    do                            /* parent handlers */
    :: i < N -> if :: snap[i] -> pending[i] = false :: else -> skip fi; i++
    :: else -> break
    od
}

/* The child: its handlers (those glibc runs), then a call to each copy. */
active proctype child()
{
    bool refuse[N];
    bool reset[N];
    byte i = 0;
    forked;
    do
    :: i < N ->
       if
       :: c_ran[i] ->             /* fork_child + lz_dl_child */
          c_loaders[i] = 0; refuse[i] = (c_gate[i] > 0 || c_ld > 0); reset[i] = true
       :: else -> skip
       fi;
       i++
    :: else -> break
    od;
    i = 0;
    do
    :: i < N ->
#ifndef OLD
       /* lz_dl_adopt: the state is the parent's, reset it here */
       if
       :: !reset[i] && registered[i] ->
          c_loaders[i] = 0; refuse[i] = (c_gate[i] > 0 || c_ld > 0); reset[i] = true
       :: else -> skip
       fi;
#endif
       if
       :: c_status[i] == LOADED -> skip
       :: else ->
          c_loaders[i] == 0;      /* lz_dl_wait: for a search to end */
          if
          :: refuse[i] -> skip    /* fails, saying it was forked mid-dlopen */
          :: else -> assert(c_ld == 0); c_status[i] = LOADED   /* its own dlopen */
          fi
       fi;
       i++
    :: else -> break
    od
}
#elif defined(AUDIT)
/* ---- The audit module's decision ---- */
#define UNTRIED 0
#define LOADED  1
#define WHEEL  1     /* the file torch preloads by path (its name as torch wrote it) */
#define SYSTEM 2     /* another copy (a CuPy-style load, or LAZYNCCL_LIBPATH's) */
#define DROPIN 3

byte mapped = 0;     /* real copies mapped: bit WHEEL, bit SYSTEM */
byte realcopy = 0;   /* the first real copy la_objopen saw (0: none) */
byte dnames = 0;     /* names ld.so gave the drop-in: a redirected by-path request's
                      * string (glibc's origname), bit per path */
byte ld = 0;         /* the dynamic linker's lock */
byte dstatus = UNTRIED;
byte loaded = 0;     /* the real file the drop-in loaded */
byte asked = 0;      /* the path the drop-in was told the program asked for */
byte searching = 0;  /* the drop-in's search runs (its own lock, short) */
bool forked = false;
byte c_mapped, c_dstatus, c_loaded, c_asked, c_real;

inline ld_lock() { atomic { ld == 0 -> ld = _pid + 1 } }
inline ld_unlock() { ld = 0 }

/* dlopen(path) by requester (ours: an object of ours; respelled: the
 * drop-in's second try, the same file under a name ld.so has not given the
 * drop-in, "dir/./file"). ld.so first matches the name against loaded
 * objects, then asks the audit module (la_objsearch), then maps, and
 * la_objopen records the first real copy. */
inline do_dlopen(ours, respelled, path, got) {
    ld_lock();
    if
    :: !respelled && (dnames & (1 << path)) != 0 -> got = DROPIN   /* origname */
    :: (respelled || (dnames & (1 << path)) == 0) && (mapped & (1 << path)) != 0 -> got = path
    :: (respelled || (dnames & (1 << path)) == 0) && (mapped & (1 << path)) == 0 ->
#ifdef OLD
       got = DROPIN;                                   /* naive: every request */
#else
       if
       :: ours -> got = path                           /* the cookie says ours */
#ifdef FIRST_RULE
       :: !ours -> got = DROPIN                        /* the drop-in, always */
#else
       :: !ours && realcopy != 0 -> got = realcopy     /* the copy in use */
       :: !ours && realcopy == 0 -> got = DROPIN
#endif
       fi;
#endif
       if
       :: got == DROPIN ->
          dnames = dnames | (1 << path);
          if :: asked == 0 -> asked = path :: else -> skip fi
       :: else ->
          mapped = mapped | (1 << got);
          if :: realcopy == 0 -> realcopy = got :: else -> skip fi
       fi
    fi;
    ld_unlock()
}

/* The drop-in's first call: search once (the asked path, or LIBPATH's),
 * respelled when ld.so hands back the drop-in itself. */
inline first_call(got, which) {
    if
    :: atomic { dstatus == UNTRIED && searching == 0 -> searching = _pid + 1 } ->
#ifdef LIBPATH
       do_dlopen(1, 0, SYSTEM, got);
#else
       if
       :: asked != 0 -> do_dlopen(1, 0, asked, got)
       :: else -> do_dlopen(1, 0, WHEEL, got)      /* found by the default search */
       fi;
#endif
       if
       :: got == DROPIN -> which = (asked != 0 -> asked : WHEEL); do_dlopen(1, 1, which, got)
       :: else -> skip
       fi;
       /* the real library must be a real file: the drop-in calling through
        * itself waits for its own load (the naive module's hang) */
       assert(got != DROPIN);
       loaded = got; dstatus = LOADED; searching = 0
    :: atomic { dstatus == LOADED || (searching != 0 && searching != _pid + 1) } ->
       dstatus == LOADED                              /* wait for the searcher */
    fi
}

/* torch: preloads the wheel's NCCL by path, then calls a collective. */
active proctype torch()
{
    byte got, which;
    do_dlopen(0, 0, WHEEL, got);
    assert(got == DROPIN || got == realcopy);
    first_call(got, which)
}

/* A CuPy/cuda.pathfinder-style load of another copy by path, then a call. */
active proctype cupy()
{
    byte got, which;
    do_dlopen(0, 0, SYSTEM, got);
    assert(got == DROPIN || got == realcopy);
    first_call(got, which)
}

/* A tool (compute-sanitizer's injection) re-opening the library by path:
 * before the first load it gets the drop-in; after it, by the loaded file's
 * own name (as /proc/self/maps gives it) or another file's, the copy in
 * use. Re-opening the very string a redirected request named before the
 * first load gives the drop-in (origname, the documented limit). */
active proctype tool()
{
    byte got, name, seen;
    if
    :: atomic { dstatus == UNTRIED -> skip };          /* before the first call */
       do_dlopen(0, 0, SYSTEM, got);
       assert(got == DROPIN || got == realcopy)
    :: atomic { dstatus == LOADED -> name = loaded };  /* after it */
       do_dlopen(0, 1, name, got);
       assert(got == loaded);
       name = (loaded == WHEEL -> SYSTEM : WHEEL);
       seen = dnames;                                  /* names redirected before */
       do_dlopen(0, 0, name, got);
       assert(got == loaded || (got == DROPIN && (seen & (1 << name)) != 0))
    fi
}

/* fork() at any step; the child preloads by path again and calls: the
 * decision needs no state of the parent's threads (each object's cookie). */
active proctype forker()
{
    byte got;
    atomic { ld == 0 ->
             c_mapped = mapped; c_dstatus = dstatus; c_loaded = loaded; c_asked = asked;
             c_real = realcopy; forked = true };
    /* the child: a by-path load, then a call (its own search if none finished) */
    atomic {
        if
        :: c_real != 0 -> got = c_real
        :: else -> got = DROPIN
        fi;
        if
        :: c_dstatus != LOADED ->
#ifdef OLD
           got = DROPIN;      /* its own by-path load is redirected too */
#elif defined(LIBPATH)
           got = (c_real != 0 -> c_real : SYSTEM);
#else
           got = (c_real != 0 -> c_real : (c_asked != 0 -> c_asked : WHEEL));
#endif
           assert(got != DROPIN);
           c_mapped = c_mapped | (1 << got)
        :: else -> skip
        fi;
        assert(!((c_mapped & (1 << WHEEL)) != 0 && (c_mapped & (1 << SYSTEM)) != 0))
    }
}

/* One real copy at every step, in the parent and in the child. */
active proctype monitor()
{
end:
    atomic { (mapped & (1 << WHEEL)) != 0 && (mapped & (1 << SYSTEM)) != 0 -> assert(false) }
}
#else
#define UNTRIED 0
#define LOADED  1
#define FAILED  2
#define REENTERED 3
#define BUSY      4

#define RESOLVER 0
#define REAL     1
#define FAIL     2

#ifndef CALLERS
#define CALLERS 1
#endif
#define NPROC (CALLERS + 5)

byte status = UNTRIED;
byte slot = RESOLVER;      /* one export's slot */
byte gen = 0;
byte loads = 0;            /* publications of LOADED */
byte obj = 0;              /* the library object: 0 none, 1 half-loaded, 2 loaded */
byte refs = 0;             /* its dlopen references (dlclose drops one; 0 unloads it) */
byte ctors = 0;            /* runs of its constructor: at most one (I3) */
/* The library's variables as the shims define them (I6): 0 the shim's
 * zeros, 1 half-copied, 2 the library's values. committing: a commit runs. */
byte filled = 0;
bool committing = false;
bool present = false;      /* is the library installed? (the retry installs it) */

/* The library's lock (st->mu), plain; the dynamic linker's lock, recursive. */
byte mu = 0;
byte ld = 0;
byte ld_depth = 0;

/* Searches running, and who runs them (st->loaders, st->active). */
byte loaders = 0;
bool searching[NPROC];
/* Our threads inside the dynamic linker (lz_dl.c's gate_open), and fork. */
byte gate_open = 0;
bool fork_pending = false;
bool forked = false;

/* -DWAITER: a holder of the dynamic linker's lock waiting for caller 0's
 * first call to end. */
bool holder_waits = false;
bool call_ended = false;

/* A snapshot taken at fork(): what the child inherits. */
byte c_status, c_obj, c_gate, c_filled;
bool c_committing;
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

/* A window of lz_dl.c around a call into the dynamic linker. */
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
/* lz_ldlock_take, before each call of a search into the dynamic linker:
 * take its lock (trylock), or end at once (busy) when its holder waits for
 * this thread; the call then takes it again inside, as its holder. With
 * -DLOOK_ONLY (lz_ldlock_wait's look at the start only), the call waits
 * for the lock. */
inline ld_take(busy) {
#if defined(OLD) || defined(LOOK_ONLY)
    ld_acquire()
#else
    if
    :: atomic { (ld == 0 || ld == _pid + 1) -> ld = _pid + 1; ld_depth++ }
#if defined(WAITER) && !defined(NO_LDLOCK_CHECK)
    :: atomic { (ld != 0 && ld != _pid + 1 && holder_waits && _pid == 0) -> busy = true }
#endif
    fi
#endif
}

inline dlopen_lib(found, cancel_on) {
    enter();
    cancel_point(cancel_on);
    ld_take(busy);
    if
    :: busy -> found = false
    :: !busy && present ->
        if
        :: obj == 0 -> obj = 1;
           /* the library's constructor, with the dynamic linker locked */
           ctors++; assert(ctors <= 1);  /* I3: a loaded library is never unloaded and loaded again */
           reenter();
           obj = 2
        :: obj == 2 -> skip
        fi;
        refs++;
        found = true
    :: !busy && !present -> found = false
    fi;
    if :: !busy -> ld_release() :: else -> skip fi;
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
/* A protocol: the lock held across the whole search. */
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
                :: found -> filled = 2; loads++; assert(loads <= 1); status = LOADED; assert(slot != FAIL)  /* I1, I2 */
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

/* The fill's look-ups (lz_dlsym): calls into the dynamic linker. */
inline prepare() {
    enter();
    ld_take(busy);
    if :: !busy -> ld_release() :: else -> skip fi;
    leave()
}

/* The commit (lz_data.c): each variable still as the shim defined it takes
 * the library's value, one step at a time (a fork may fall between). A
 * variable already written is left alone, so a commit over a half-copied
 * one leaves it half-copied. */
inline commit() {
    committing = true;
    if
    :: filled == 0 -> filled = 1; filled = 2
    :: else -> skip
    fi
}

/* lz_ldlock_wait, before any lock: wait while another thread holds the
 * dynamic linker's lock, and end at once (busy) when that thread waits for
 * this one. */
inline ldlock_wait(busy) {
    busy = false;
#ifdef WAITER
    if
    :: atomic { (ld == 0 || ld == _pid + 1) -> skip }
#ifndef NO_LDLOCK_CHECK
    :: atomic { (ld != 0 && ld != _pid + 1 && holder_waits && _pid == 0) -> busy = true }
#endif
    fi
#endif
}

/* Today's protocol (lz_ensure_loaded): no lock across the search; wait for
 * another searcher only while no thread of ours is in the dynamic linker;
 * publish once per generation. Cancellation is disabled throughout. */
inline ensure_loaded(result) {
    may_wait = true;
    ldlock_wait(busy);
    if
    :: busy -> result = BUSY
    :: else ->
    do
    :: atomic { status != UNTRIED -> result = status }; break   /* one acquire load */
    :: else ->
        lock_mu();
        if
        :: searching[_pid] -> result = REENTERED; unlock_mu(); break
        :: status != UNTRIED -> unlock_mu()
        :: status == UNTRIED && loaders > 0 && may_wait ->
            unlock_mu();
            /* lz_dl_wait */
            (status != UNTRIED || loaders == 0 || gate_open > 0);
            may_wait = (gate_open == 0)
        :: status == UNTRIED && !(loaders > 0 && may_wait) ->
            searching[_pid] = true; loaders++; mygen = gen;
            unlock_mu();
            dlopen_lib(found, false);
            if
            :: found -> prepare()      /* dlsym of each variable: a window */
            :: else -> skip
            fi;
            lock_mu();
            searching[_pid] = false; loaders--;
            if
            :: busy ->
                /* Cut short by a refused take: nothing published (a handle
                 * opened stays open); loaded meanwhile by another, LOADED. */
                if :: status == LOADED -> result = LOADED :: else -> result = BUSY fi;
                unlock_mu(); break
            :: !busy && mygen == gen && status == UNTRIED ->
                if
                :: found ->
#ifndef FILL_LATE
                   commit();
#endif
                   loads++; assert(loads <= 1); status = LOADED; assert(slot != FAIL);  /* I1, I2 */
                   committing = false
                :: else -> status = FAILED
                fi;
                result = status; unlock_mu();
#ifdef FILL_LATE
                if :: result == LOADED -> commit(); committing = false :: else -> skip fi;
#endif
                break
            :: else ->
               /* Lost, or stale: again. A search that opened the library
                * drops its reference only where the library published is
                * loaded (the same object: the published one holds another);
                * a stale search keeps it (lz_once.c's end_turn). With
                * CLOSE_STALE, as before: every losing search closes. */
#ifdef CLOSE_STALE
               if
               :: found -> refs--; if :: refs == 0 -> obj = 0 :: else -> skip fi
               :: else -> skip
               fi;
#else
               if
               :: found && status == LOADED -> refs--; assert(refs > 0)
               :: else -> skip
               fi;
#endif
               unlock_mu(); may_wait = true
            fi
        fi
    od
    fi
}

inline first_call() {
    do
    :: ensure_loaded(res);
       if
       :: res == LOADED ->
          atomic { if :: slot == RESOLVER -> slot = REAL :: else -> skip fi };
          assert(filled == 2);   /* I6: the call reaches the library */
          break
       :: res == REENTERED -> break
       :: res == BUSY -> break   /* the failure value, not published */
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

#define LOCALS bool found; byte res; bool may_wait; byte mygen; bool busy

active [CALLERS] proctype caller()
{
    LOCALS;
#if defined(WAITER) && !defined(WAITER_LATE)
    if :: _pid == 0 -> (holder_waits) :: else -> skip fi;
#endif
    first_call();
cancelled:
    if :: _pid == 0 -> call_ended = true :: else -> skip fi
}

#ifdef WAITER
/* A thread takes the dynamic linker's lock (dlopen of a plugin whose
 * constructor, or dlclose of one whose destructor, runs) and waits there
 * for caller 0's first call to end. */
active proctype waiter()
{
    ld_acquire();
    holder_waits = true;
    (call_ended);
    holder_waits = false;
    ld_release()
}
#endif

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
        c_filled = filled; c_committing = committing;
        c_mid_ld = (ld != 0 && ld != _pid + 1 && obj == 1) || c_gate > 0;
        forked = true;
#ifndef OLD
        fork_pending = false
#endif
    };
#if !defined(OLD) && !defined(NO_FORK_FINISH)
    /* fork_child: a commit forked half-way is finished with its plan */
    if :: c_committing -> c_filled = 2 :: else -> skip fi;
#endif
    /* the child's first call */
    if
    :: c_status == LOADED -> assert(c_obj == 2);
       assert(c_filled == 2)   /* I6 */
    :: else ->
#ifdef OLD
       /* it starts again: dlopen over whatever the parent left */
       assert(c_obj != 1)
#else
       /* lz_dl_child: refuse if a window was open or ld.so mid-change */
       if
       :: c_mid_ld -> skip                 /* fails with a message, no dlopen */
       :: else -> assert(c_obj != 1);
          /* its own search and commit, then the call */
          if :: c_filled == 0 -> c_filled = 2 :: else -> skip fi;
          assert(c_filled == 2)            /* I6 */
       fi
#endif
    fi;
cancelled:
    skip
}
#endif

#endif
