package io.betree.internal.memory;

import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * Two threads that take memory for the callers' threads: one for the pool's chunks (with
 * {@code betree.nodeMemory=netty}, for every buffer within a chunk), one for buffers larger than a
 * chunk. The C allocator behind direct memory (glibc's malloc) gives
 * each thread that allocates while others do an arena of its own, up to eight per core, and keeps
 * what is freed in the arena it came from: with 16 writer threads each growing root buffers, a
 * process with a 128 MiB cache held about 240 MiB of freed memory (resident 690 MiB against
 * 447 MiB when one thread allocated). Allocations made here come from two arenas at most,
 * whichever thread frees them later. The engine's own threads are few and allocate directly,
 * except buffers larger than a pool chunk (see {@link NodeMemory#allocate}). Buffers within a chunk
 * are cut from it on the caller's thread, which makes no C allocation.
 *
 * <p>A buffer larger than a chunk is a C allocation of its own, which under a process memory cap
 * took 5-40 ms at times (about 470 times in a 28 M-row iiBench with a 64 MiB cache, nearly all of
 * them 2-6 MiB buffers); with one thread for all sizes, requests for small buffers, a writer's
 * among them, queued behind those, 880 of them for 5 ms or more. Hence a thread of their own.
 * Each thread is started on demand and ends after a minute idle.
 */
final class AllocationThread {
    private static final ThreadPoolExecutor SMALL = executor("betree-allocator");
    private static final ThreadPoolExecutor HUGE = executor("betree-allocator-huge");

    private AllocationThread() {
    }

    private static ThreadPoolExecutor executor(String name) {
        ThreadPoolExecutor e = new ThreadPoolExecutor(1, 1, 60, TimeUnit.SECONDS, new LinkedBlockingQueue<>(),
                r -> EngineThreads.newDaemon(r, name));
        e.allowCoreThreadTimeOut(true);
        return e;
    }

    /** As {@link #allocate}, for a buffer larger than a pool chunk, on the thread for those. */
    static <T> T allocateHuge(Supplier<T> allocation) {
        return run(HUGE, allocation);
    }

    /**
     * Runs {@code allocation} on the allocation thread and returns its result, or throws what it
     * threw. Waits without giving up on an interrupt (the memory would be lost), which it then
     * passes on by setting the caller's interrupt flag again.
     */
    static <T> T allocate(Supplier<T> allocation) {
        return run(SMALL, allocation);
    }

    /** Runs {@code task} on the allocation thread without waiting for it. */
    static void later(Runnable task) {
        SMALL.execute(task);
    }

    private static <T> T run(ThreadPoolExecutor thread, Supplier<T> allocation) {
        Future<T> result = thread.submit(allocation::get);
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    return result.get();
                } catch (InterruptedException e) {
                    interrupted = true;
                } catch (ExecutionException e) {
                    Throwable cause = e.getCause();
                    if (cause instanceof RuntimeException r) {
                        throw r;
                    }
                    if (cause instanceof Error err) {
                        throw err;
                    }
                    throw new IllegalStateException("allocation failed: " + cause, cause);
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
