package io.betree.internal.cache;

import io.betree.internal.memory.EngineThreads;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * The evictor threads, shared by the node caches of every environment in the process: a stream
 * processor that opens hundreds of stores must not get an evictor thread for each. A cache over its
 * budget queues one eviction task at a time; the task evicts for a while and, with work left,
 * queues itself again behind the other caches' tasks, so one cache's write-backs cannot starve
 * another's.
 *
 * <p>Threads are daemons, started on demand and ended after a minute idle: one per four cores, at
 * least two, at most eight, and each cache runs up to {@link #TASKS_PER_CACHE} tasks at once. With
 * one thread, a one-writer delete-FIFO load kept it busy about half the time compressing and
 * writing back, one node after another, while both flushers waited for room at the budget
 * (10.3-10.9 s in waits of 10 ms or more, in runs of 147-151 s) with a core partly idle. The
 * threads allocate node memory through the allocation thread: each thread that allocates
 * directly gets an arena of the C allocator that keeps what it frees (an iiBench run went past its 512 MiB cap with two evictor threads allocating directly).
 */
final class Evictors {
    /** Eviction tasks one cache may have queued or running at once. */
    static final int TASKS_PER_CACHE = 2;
    /** Evictor threads: one per four cores, at least two, at most eight. */
    static final int THREADS = Math.min(8, Math.max(2, Runtime.getRuntime().availableProcessors() / 4));
    private static final ThreadPoolExecutor EVICTORS;

    static {
        EVICTORS = new ThreadPoolExecutor(THREADS, THREADS, 60, TimeUnit.SECONDS, new LinkedBlockingQueue<>(),
                r -> EngineThreads.newDaemonAllocatingIndirectly(r, "betree-evictor"));
        EVICTORS.allowCoreThreadTimeOut(true);
    }

    private Evictors() {
    }

    /** Runs {@code task} on an evictor thread. */
    static void submit(Runnable task) {
        EVICTORS.execute(task);
    }
}
