package io.betree.internal.memory;

/**
 * Makes the engine's own threads (flushers, evictors, syncs, checkpoints) and tells them apart
 * from the callers' threads, which {@link NodeMemory} treats differently: see
 * {@link AllocationThread}.
 */
public final class EngineThreads {
    private EngineThreads() {
    }

    /** A new, unstarted daemon thread of the engine named {@code name} that runs {@code task}. */
    public static Thread newDaemon(Runnable task, String name) {
        Thread t = new EngineThread(task, name);
        t.setDaemon(true);
        return t;
    }

    /** Whether the calling thread is one of the engine's own. */
    static boolean onEngineThread() {
        return Thread.currentThread() instanceof EngineThread;
    }

    private static final class EngineThread extends Thread {
        EngineThread(Runnable task, String name) {
            super(task, name);
        }
    }
}
