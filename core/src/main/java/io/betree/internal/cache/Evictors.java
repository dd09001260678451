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
 * least one, at most eight. Few on purpose: each thread that allocates node memory keeps freed
 * memory of its own in the C allocator (an iiBench run went past its 512 MiB cap with two evictor
 * threads where one sufficed).
 */
final class Evictors {
    private static final ThreadPoolExecutor EVICTORS;

    static {
        int threads = Math.min(8, Math.max(1, Runtime.getRuntime().availableProcessors() / 4));
        EVICTORS = new ThreadPoolExecutor(threads, threads, 60, TimeUnit.SECONDS, new LinkedBlockingQueue<>(),
                r -> EngineThreads.newDaemon(r, "betree-evictor"));
        EVICTORS.allowCoreThreadTimeOut(true);
    }

    private Evictors() {
    }

    /** Runs {@code task} on an evictor thread. */
    static void submit(Runnable task) {
        EVICTORS.execute(task);
    }
}
