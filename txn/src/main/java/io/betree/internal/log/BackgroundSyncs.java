package io.betree.internal.log;

import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * One daemon thread, shared by every log of the process, that syncs log segments ahead of need
 * (see {@link LogTail}): a stream processor may open hundreds of stores, and they must not each
 * bring a thread of their own. Started on demand, ended after a minute idle.
 */
final class BackgroundSyncs {
    private static final ThreadPoolExecutor SYNCER;

    static {
        SYNCER = new ThreadPoolExecutor(1, 1, 60, TimeUnit.SECONDS, new LinkedBlockingQueue<>(), r -> {
            Thread t = new Thread(r, "betree-log-sync");
            t.setDaemon(true);
            return t;
        });
        SYNCER.allowCoreThreadTimeOut(true);
    }

    private BackgroundSyncs() {
    }

    /** Runs {@code sync} on the shared thread. */
    static void submit(Runnable sync) {
        SYNCER.execute(sync);
    }
}
