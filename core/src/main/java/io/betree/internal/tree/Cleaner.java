package io.betree.internal.tree;

import io.betree.internal.memory.EngineThreads;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * Drains the message buffers of trees that writes have left alone, in the spirit of PerconaFT's
 * cleaner thread. A tree's flushers move messages down only while its root is over its size, so
 * when writes stop the last root-full of them stays buffered for good: every point read and scan
 * searches it, and the root's buffers, which the cache keeps resident, take memory from the
 * leaves (after a 28 M-row iiBench, 5-10 MB of the primary index's root under a 64 MiB cache,
 * where its leaves' filters need some 41 MB). Once a tree has taken no write for
 * {@link #IDLE_TICKS} ticks, each of its buffers that holds a full flush's batch is pushed one
 * level down, as sizes below then require, one step per tick for the whole process
 * ({@link RootFlusher#drainStep}) on the flusher threads, until none is left; the next write
 * stops the draining. Steps go one per tick, not back to back: back to back, while a test read a
 * tree its writes had just left, they raised the process's peak resident size by 10 MiB.
 *
 * <p>One timer thread for the process, ticking every {@link #TICK_MILLIS} ms: it counts the ticks
 * that writers stamp their trees with ({@link #epoch}) and starts drains. It is a daemon, started
 * with the first tree. Thread-safe.
 */
final class Cleaner {
    static final long TICK_MILLIS = 250;
    /** Ticks without a write after which a tree counts as left alone: a second. */
    static final int IDLE_TICKS = 4;

    private static final Set<BeTree> TREES = ConcurrentHashMap.newKeySet();
    private static volatile int epoch;
    /** Whether a drain step is queued or running; set by the timer thread, cleared by the step. */
    private static volatile boolean stepRunning;
    /** Where the next tick starts looking among the trees; the timer thread's. */
    private static int turn;
    private static final ScheduledThreadPoolExecutor TIMER = new ScheduledThreadPoolExecutor(1,
            r -> EngineThreads.newDaemonAllocatingIndirectly(r, "betree-cleaner"));

    static {
        TIMER.scheduleWithFixedDelay(Cleaner::tick, TICK_MILLIS, TICK_MILLIS, TimeUnit.MILLISECONDS);
    }

    private Cleaner() {
    }

    /** The current tick: a writer stamps its tree with it ({@link BeTree#writeAll}). Lock-free. */
    static int epoch() {
        return epoch;
    }

    /** Whether a tree last written at tick {@code lastWrite} has been left alone long enough. */
    static boolean idleSince(int lastWrite) {
        return epoch - lastWrite >= IDLE_TICKS;
    }

    /** Starts watching {@code tree}, until {@link #forget}. */
    static void watch(BeTree tree) {
        TREES.add(tree);
    }

    /** Stops watching {@code tree}: a closed tree. */
    static void forget(BeTree tree) {
        TREES.remove(tree);
    }

    /**
     * Counts the tick and, unless a drain step is still running, gives one to the next tree in
     * turn that wants one: one step at a time for the whole process, so that a stream processor's
     * hundreds of idle stores do not queue hundreds of steps ahead of the flushes of busy ones.
     */
    private static void tick() {
        epoch++;
        if (stepRunning) {
            return;
        }
        List<BeTree> trees = new ArrayList<>(TREES);
        for (int k = 0; k < trees.size(); k++) {
            BeTree tree = trees.get(Math.floorMod(turn + k, trees.size()));
            try {
                if (tree.wantsDrain()) {
                    turn += k + 1;
                    stepRunning = true;
                    FlushScheduler.submit(() -> {
                        try {
                            tree.drainStep();
                        } finally {
                            stepRunning = false;
                        }
                    });
                    return;
                }
            } catch (Throwable e) {
                // No flusher thread could be started, say: the next tick tries again. An error
                // thrown out of this task would end the timer for the process.
                stepRunning = false;
                return;
            }
        }
    }
}
