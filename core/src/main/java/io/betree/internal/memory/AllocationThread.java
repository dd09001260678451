package io.betree.internal.memory;

import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * One thread that takes memory from the pool for the callers' threads. The C allocator behind
 * direct memory (glibc's malloc) gives each thread that allocates while others do an arena of its
 * own, up to eight per core, and keeps what is freed in the arena it came from: with 16 writer
 * threads each growing root buffers, a process with a 128 MiB cache held about 240 MiB of freed
 * memory (resident 690 MiB against 447 MiB when one thread allocated). Allocations made here all
 * come from one arena, whichever thread frees them later. The engine's own threads are few and
 * allocate directly, except buffers larger than a pool chunk (see {@link NodeMemory#allocate}).
 * Started on demand, ended after a minute idle.
 */
final class AllocationThread {
    private static final ThreadPoolExecutor ALLOCATOR;

    static {
        ALLOCATOR = new ThreadPoolExecutor(1, 1, 60, TimeUnit.SECONDS, new LinkedBlockingQueue<>(),
                r -> EngineThreads.newDaemon(r, "betree-allocator"));
        ALLOCATOR.allowCoreThreadTimeOut(true);
    }

    private AllocationThread() {
    }

    /**
     * Runs {@code allocation} on the allocation thread and returns its result, or throws what it
     * threw. Waits without giving up on an interrupt (the memory would be lost), which it then
     * passes on by setting the caller's interrupt flag again.
     */
    static <T> T allocate(Supplier<T> allocation) {
        Future<T> result = ALLOCATOR.submit(allocation::get);
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
