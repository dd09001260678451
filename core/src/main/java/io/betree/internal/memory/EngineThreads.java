package io.betree.internal.memory;

/** Makes the engine's own threads (flushers, evictors, syncs, checkpoints, the allocation thread). */
public final class EngineThreads {
    private EngineThreads() {
    }

    /** A new, unstarted daemon thread of the engine named {@code name} that runs {@code task}. */
    public static Thread newDaemon(Runnable task, String name) {
        Thread t = new Thread(task, name);
        t.setDaemon(true);
        return t;
    }
}
