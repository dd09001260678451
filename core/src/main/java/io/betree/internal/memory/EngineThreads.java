package io.betree.internal.memory;

/**
 * Makes the engine's own threads (flushers, evictors, syncs, checkpoints) and tells apart those
 * that allocate node memory directly from all others, the callers' threads included, which
 * {@link NodeMemory} sends to the {@link AllocationThread}.
 */
public final class EngineThreads {
    private EngineThreads() {
    }

    /**
     * A new, unstarted daemon thread of the engine named {@code name} that runs {@code task} and
     * allocates node memory directly: for threads that allocate little (syncs,
     * checkpoints, the allocation thread itself).
     */
    public static Thread newDaemon(Runnable task, String name) {
        return daemon(new EngineThread(task, name));
    }

    /**
     * As {@link #newDaemon}, for a thread whose C allocations for node memory (the pool's chunks)
     * go through the allocation thread, as callers' threads do: the flushers allocate most of the
     * engine's buffers, and each thread that allocates directly gets an arena of the C allocator
     * that keeps what it frees. With two
     * flushers allocating directly, 16 time-series writers under a 512 MiB process cap (128 MiB
     * cache) were killed twice in two runs; through the allocation thread they peaked at 441 MiB.
     */
    public static Thread newDaemonAllocatingIndirectly(Runnable task, String name) {
        return daemon(new Thread(task, name));
    }

    private static Thread daemon(Thread t) {
        t.setDaemon(true);
        return t;
    }

    /** Whether the calling thread is one of the engine's threads that allocate node memory directly. */
    static boolean allocatesDirectly() {
        return Thread.currentThread() instanceof EngineThread;
    }

    private static final class EngineThread extends Thread {
        EngineThread(Runnable task, String name) {
            super(task, name);
        }
    }
}
