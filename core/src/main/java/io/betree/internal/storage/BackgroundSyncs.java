package io.betree.internal.storage;

import io.betree.internal.memory.EngineThreads;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * One daemon thread, shared by every file of the process, that syncs written data ahead of need:
 * log segments (every few MiB appended) and data files (every {@link BlockFile#SYNC_AHEAD_BYTES}
 * written). The operating system then never holds much of either unwritten, so a sync that
 * someone waits for (a segment sealed at a roll, a checkpoint) has little left to do, and the
 * file system's journal commits, which an fsync of one file forces and which wait for the other
 * files' pending data, stay short; without it a data file write stalled for hundreds of
 * milliseconds behind the log's sync. A stream processor may open hundreds of stores, and they
 * must not each bring a thread of their own. Started on demand, ended after a minute idle.
 */
public final class BackgroundSyncs {
    private static final ThreadPoolExecutor SYNCER;

    static {
        SYNCER = new ThreadPoolExecutor(1, 1, 60, TimeUnit.SECONDS, new LinkedBlockingQueue<>(), r -> {
            return EngineThreads.newDaemon(r, "betree-sync");
        });
        SYNCER.allowCoreThreadTimeOut(true);
    }

    private BackgroundSyncs() {
    }

    /** Runs {@code sync} on the shared thread, after the syncs submitted before it. */
    public static void submit(Runnable sync) {
        SYNCER.execute(sync);
    }
}
