/* SPDX-License-Identifier: MIT
 * NCCL collectives through liblazynccl on real GPUs, every result checked
 * element by element against a host reference on non-trivial data.
 *   collectives single              one process drives every GPU (ncclCommInitAll)
 *   collectives rank R N IDFILE     rank R of N processes, one GPU each; rank 0
 *                                   writes the unique id to IDFILE, the others read it
 * Prints one line per operation: "<op> ok" or "<op> FAILED (...)". */
#include <cuda_runtime.h>
#include <lazynccl.h>
#include <nccl.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define COUNT ((size_t)1048576 + 17)
#define MAXR 8

typedef struct {
    int rank, dev;
    ncclComm_t comm;
    cudaStream_t stream;
    int32_t *send, *recv;
} rank_t;

static rank_t ranks[MAXR];
static int nlocal, nranks, failures;

#define CUDA(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
    fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_)); exit(2); } } while (0)
#define NCCL(x) do { ncclResult_t r_ = (x); if (r_ != ncclSuccess) { \
    fprintf(stderr, "%s: %s (%s)\n", #x, ncclGetErrorString(r_), lazynccl_last_error() ? lazynccl_last_error() : ""); exit(3); } } while (0)

/* Rank r's i-th input: deterministic, irregular, small enough that sums fit. */
static int32_t v(int r, size_t i)
{
    uint32_t x = (uint32_t)(r + 1) * 2654435761u ^ (uint32_t)i * 40503u;
    x ^= x >> 13;
    return (int32_t)(x % 100003u);
}

static void upload(rank_t *k, size_t n, int32_t (*gen)(int, size_t, void *), void *arg)
{
    int32_t *h = malloc(n * sizeof *h);
    for (size_t i = 0; i < n; i++)
        h[i] = gen(k->rank, i, arg);
    CUDA(cudaSetDevice(k->dev));
    CUDA(cudaMemcpy(k->send, h, n * sizeof *h, cudaMemcpyHostToDevice));
    CUDA(cudaMemset(k->recv, 0xff, COUNT * nranks * sizeof *h));
    free(h);
}

static int32_t gen_plain(int r, size_t i, void *arg) { (void)arg; return v(r, i); }

static void finish(void)
{
    for (int l = 0; l < nlocal; l++) {
        CUDA(cudaSetDevice(ranks[l].dev));
        CUDA(cudaStreamSynchronize(ranks[l].stream));
    }
}

/* Compare rank k's recv buffer with want(rank, i) for n elements. */
static int check(rank_t *k, size_t n, int32_t (*want)(int, size_t), const char *op)
{
    int32_t *h = malloc(n * sizeof *h);
    CUDA(cudaSetDevice(k->dev));
    CUDA(cudaMemcpy(h, k->recv, n * sizeof *h, cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < n; i++)
        if (h[i] != want(k->rank, i)) {
            printf("%s FAILED (rank %d element %zu: got %d, want %d)\n", op, k->rank, i, h[i],
                   want(k->rank, i));
            free(h);
            failures++;
            return 0;
        }
    free(h);
    return 1;
}

static int32_t want_sum(int r, size_t i) { (void)r; int32_t s = 0; for (int k = 0; k < nranks; k++) s += v(k, i); return s; }
static int32_t want_gather(int r, size_t i) { (void)r; return v((int)(i / COUNT), i % COUNT); }
static int32_t want_rs(int r, size_t i) { int32_t s = 0; for (int k = 0; k < nranks; k++) s += v(k, (size_t)r * COUNT + i); return s; }
static int32_t want_bcast(int r, size_t i) { (void)r; return v(1 % nranks, i); }
/* AlltoAll: rank k sends block p (elements p*COUNT..) to rank p. */
static int32_t want_a2a(int r, size_t i) { int from = (int)(i / COUNT); return v(from, (size_t)r * COUNT + i % COUNT); }
static int32_t want_ring(int r, size_t i) { return v((r + nranks - 1) % nranks, i); }

static void run_all(void)
{
    const char *op;
    /* AllReduce */
    op = "AllReduce";
    for (int l = 0; l < nlocal; l++) upload(&ranks[l], COUNT, gen_plain, NULL);
    NCCL(ncclGroupStart());
    for (int l = 0; l < nlocal; l++)
        NCCL(ncclAllReduce(ranks[l].send, ranks[l].recv, COUNT, ncclInt32, ncclSum, ranks[l].comm, ranks[l].stream));
    NCCL(ncclGroupEnd());
    finish();
    int ok = 1;
    for (int l = 0; l < nlocal; l++) ok &= check(&ranks[l], COUNT, want_sum, op);
    if (ok) printf("%s ok\n", op);

    op = "AllGather";
    NCCL(ncclGroupStart());
    for (int l = 0; l < nlocal; l++)
        NCCL(ncclAllGather(ranks[l].send, ranks[l].recv, COUNT, ncclInt32, ranks[l].comm, ranks[l].stream));
    NCCL(ncclGroupEnd());
    finish();
    ok = 1;
    for (int l = 0; l < nlocal; l++) ok &= check(&ranks[l], COUNT * nranks, want_gather, op);
    if (ok) printf("%s ok\n", op);

    op = "ReduceScatter";
    for (int l = 0; l < nlocal; l++) upload(&ranks[l], COUNT * nranks, gen_plain, NULL);
    NCCL(ncclGroupStart());
    for (int l = 0; l < nlocal; l++)
        NCCL(ncclReduceScatter(ranks[l].send, ranks[l].recv, COUNT, ncclInt32, ncclSum, ranks[l].comm, ranks[l].stream));
    NCCL(ncclGroupEnd());
    finish();
    ok = 1;
    for (int l = 0; l < nlocal; l++) ok &= check(&ranks[l], COUNT, want_rs, op);
    if (ok) printf("%s ok\n", op);

    op = "AlltoAll";
    NCCL(ncclGroupStart());
    for (int l = 0; l < nlocal; l++)
        NCCL(ncclAlltoAll(ranks[l].send, ranks[l].recv, COUNT, ncclInt32, ranks[l].comm, ranks[l].stream));
    NCCL(ncclGroupEnd());
    finish();
    ok = 1;
    for (int l = 0; l < nlocal; l++) ok &= check(&ranks[l], COUNT * nranks, want_a2a, op);
    if (ok) printf("%s ok\n", op);

    op = "Broadcast";
    for (int l = 0; l < nlocal; l++) upload(&ranks[l], COUNT, gen_plain, NULL);
    NCCL(ncclGroupStart());
    for (int l = 0; l < nlocal; l++)
        NCCL(ncclBroadcast(ranks[l].send, ranks[l].recv, COUNT, ncclInt32, 1 % nranks, ranks[l].comm, ranks[l].stream));
    NCCL(ncclGroupEnd());
    finish();
    ok = 1;
    for (int l = 0; l < nlocal; l++) ok &= check(&ranks[l], COUNT, want_bcast, op);
    if (ok) printf("%s ok\n", op);

    op = "Reduce";
    NCCL(ncclGroupStart());
    for (int l = 0; l < nlocal; l++)
        NCCL(ncclReduce(ranks[l].send, ranks[l].recv, COUNT, ncclInt32, ncclSum, 0, ranks[l].comm, ranks[l].stream));
    NCCL(ncclGroupEnd());
    finish();
    ok = 1;
    for (int l = 0; l < nlocal; l++)
        if (ranks[l].rank == 0) ok &= check(&ranks[l], COUNT, want_sum, op);
    if (ok) printf("%s ok\n", op);

    op = "SendRecv";
    NCCL(ncclGroupStart());
    for (int l = 0; l < nlocal; l++) {
        int r = ranks[l].rank;
        NCCL(ncclSend(ranks[l].send, COUNT, ncclInt32, (r + 1) % nranks, ranks[l].comm, ranks[l].stream));
        NCCL(ncclRecv(ranks[l].recv, COUNT, ncclInt32, (r + nranks - 1) % nranks, ranks[l].comm, ranks[l].stream));
    }
    NCCL(ncclGroupEnd());
    finish();
    ok = 1;
    for (int l = 0; l < nlocal; l++) ok &= check(&ranks[l], COUNT, want_ring, op);
    if (ok) printf("%s ok\n", op);
}

static void alloc(rank_t *k)
{
    CUDA(cudaSetDevice(k->dev));
    CUDA(cudaStreamCreate(&k->stream));
    CUDA(cudaMalloc((void **)&k->send, COUNT * nranks * sizeof(int32_t)));
    CUDA(cudaMalloc((void **)&k->recv, COUNT * nranks * sizeof(int32_t)));
}

int main(int argc, char **argv)
{
    int ndev = 0;
    CUDA(cudaGetDeviceCount(&ndev));
    if (argc >= 2 && strcmp(argv[1], "single") == 0) {
        nranks = nlocal = ndev < MAXR ? ndev : MAXR;
        ncclComm_t comms[MAXR];
        int devs[MAXR];
        for (int i = 0; i < nranks; i++) devs[i] = i;
        NCCL(ncclCommInitAll(comms, nranks, devs));
        for (int i = 0; i < nranks; i++) {
            ranks[i] = (rank_t){.rank = i, .dev = i, .comm = comms[i]};
            alloc(&ranks[i]);
        }
    } else if (argc >= 5 && strcmp(argv[1], "rank") == 0) {
        int r = atoi(argv[2]);
        nranks = atoi(argv[3]);
        nlocal = 1;
        ncclUniqueId id;
        if (r == 0) {
            NCCL(ncclGetUniqueId(&id));
            char tmp[4096];
            snprintf(tmp, sizeof tmp, "%s.tmp", argv[4]);
            FILE *f = fopen(tmp, "wb");
            fwrite(&id, sizeof id, 1, f);
            fclose(f);
            rename(tmp, argv[4]);
        } else {
            FILE *f = NULL;
            for (int t = 0; t < 600 && !(f = fopen(argv[4], "rb")); t++)
                usleep(100000);
            if (!f || fread(&id, sizeof id, 1, f) != 1) { fprintf(stderr, "no unique id\n"); return 4; }
            fclose(f);
        }
        ranks[0] = (rank_t){.rank = r, .dev = r % ndev};
        CUDA(cudaSetDevice(ranks[0].dev));
        NCCL(ncclCommInitRank(&ranks[0].comm, nranks, id, r));
        alloc(&ranks[0]);
    } else {
        fprintf(stderr, "usage: collectives single | rank R N IDFILE\n");
        return 2;
    }
    run_all();
    for (int l = 0; l < nlocal; l++)
        ncclCommDestroy(ranks[l].comm);
    printf("nccl: %s (found by: %s)\n", lazynccl_loaded_path(), lazynccl_loaded_step());
    return failures ? 1 : 0;
}
