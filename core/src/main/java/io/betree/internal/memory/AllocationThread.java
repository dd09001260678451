package io.betree.internal.memory;

import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * The thread that takes buffers larger than a pool chunk from the pool for every caller. Each is a
 * C allocation of its own, and the C allocator behind direct memory (glibc's malloc) gives each
 * thread that allocates while others do an arena of its own, up to eight per core, keeping what is
 * freed in the arena it came from: made on many threads, buffers of many sizes left the arenas
 * holding far more than the pool (see {@link NodeMemory#allocate}). Made here, they come from one
 * arena whichever thread frees them.
 *
 * <p>Under a process memory cap such an allocation took 5-40 ms at times (about 470 times in a
 * 28 M-row iiBench with a 64 MiB cache, nearly all of them 2-6 MiB buffers); smaller buffers are
 * therefore not made here, so that they never queue behind one. The thread is started on demand
 * and ends after a minute idle.
 */
final class AllocationThread {
    private static final ThreadPoolExecutor HUGE = executor("betree-allocator-huge");

    private AllocationThread() {
    }

    private static ThreadPoolExecutor executor(String name) {
        ThreadPoolExecutor e = new ThreadPoolExecutor(1, 1, 60, TimeUnit.SECONDS, new LinkedBlockingQueue<>(),
                r -> EngineThreads.newDaemon(r, name));
        e.allowCoreThreadTimeOut(true);
        return e;
    }

    /**
     * Runs {@code allocation}, of a buffer larger than a pool chunk, on the allocation thread and
     * returns its result, or throws what it threw. Waits without giving up on an interrupt (the
     * memory would be lost), which it then passes on by setting the caller's interrupt flag again.
     */
    static <T> T allocateHuge(Supplier<T> allocation) {
        return run(HUGE, allocation);
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
