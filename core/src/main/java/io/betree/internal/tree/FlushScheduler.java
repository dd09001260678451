package io.betree.internal.tree;

import io.betree.internal.memory.EngineThreads;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * The flusher threads, shared by every tree of every environment in the process: a stream
 * processor may open hundreds of stores, and they must not each bring threads of their own. A
 * tree whose root has outgrown its size asks for a flush ({@link RootFlusher}); flushers then
 * move the root's heaviest buffers down, one step at a time, several of one tree at once in
 * different subtrees, while writers go on appending to the root.
 *
 * <p>Threads are daemons, started on demand and ended after a minute idle. There are as many as
 * cores less one, so that writers keep a core, but at least two: a flush step spends much of its
 * time waiting for reads of evicted nodes, and with one flusher on two cores that time was lost
 * (a 64 MiB-cache iiBench: 156 K rows/s with writers held back 29 s; with two, 162-182 K and
 * 7-11 s). Flushers allocate through the allocation thread ({@link EngineThreads}).
 */
final class FlushScheduler {
    /** Flusher threads: cores less one, at least two. */
    static final int THREADS = Math.max(2, Runtime.getRuntime().availableProcessors() - 1);
    private static final ThreadPoolExecutor FLUSHERS;

    static {
        FLUSHERS = new ThreadPoolExecutor(THREADS, THREADS, 60, TimeUnit.SECONDS, new LinkedBlockingQueue<>(), r -> {
            return EngineThreads.newDaemonAllocatingIndirectly(r, "betree-flusher");
        });
        FLUSHERS.allowCoreThreadTimeOut(true);
    }

    private FlushScheduler() {
    }

    /** Runs {@code flush} on a flusher thread. */
    static void submit(Runnable flush) {
        FLUSHERS.execute(flush);
    }
}
