package io.betree.internal.tree;

import io.betree.internal.memory.EngineThreads;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * The flusher threads, shared by every tree of every environment in the process: a stream
 * processor may open hundreds of stores, and they must not each bring threads of their own. A
 * tree whose root has outgrown its size asks for a flush ({@link RootFlusher}); a flusher then
 * moves the root's heaviest buffers down, one step at a time, while writers go on appending to
 * the root.
 *
 * <p>Threads are daemons, started on demand and ended after a minute idle. There are as many as
 * cores less one (at least one), so that writers keep a core.
 */
final class FlushScheduler {
    private static final ThreadPoolExecutor FLUSHERS;

    static {
        int threads = Math.max(1, Runtime.getRuntime().availableProcessors() - 1);
        FLUSHERS = new ThreadPoolExecutor(threads, threads, 60, TimeUnit.SECONDS, new LinkedBlockingQueue<>(), r -> {
            return EngineThreads.newDaemon(r, "betree-flusher");
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
