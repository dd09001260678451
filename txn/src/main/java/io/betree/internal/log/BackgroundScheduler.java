package io.betree.internal.log;

import io.betree.internal.memory.EngineThreads;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * The threads that run every environment's periodic work, shared by the whole process: the log
 * syncs of {@link WriteAheadLog#startPeriodicSync} and the engine's periodic checkpoints. A stream
 * processor may open hundreds of stores, and they must not each bring threads of their own (the
 * flushers, the background syncs and the allocation thread of core are shared for the same reason).
 * It lives in the log package, the lowest of txn, so that the log and the engine above it can both
 * use it.
 *
 * <p>Each owner schedules its tasks here and cancels the returned {@link PeriodicTask} when it
 * closes; cancelling waits out a run in progress of that task, never another owner's. A task runs
 * with a fixed delay between the end of one run and the start of the next, so a slow run (or a busy
 * thread) delays that task's next run rather than piling runs up.
 *
 * <p>Two threads, one per kind of work, each a daemon of the engine ({@link EngineThreads}), started
 * when a task is scheduled and ended after a minute with nothing scheduled. Log syncs are short
 * (one fsync) and due every few tens of milliseconds, and their period bounds what
 * {@code Durability.ASYNC} may lose; a checkpoint writes every dirty node and may take seconds. On
 * one thread a checkpoint would hold back every log's sync for as long as it runs. Checkpoints of
 * different environments, on the other hand, run one at a time: they would only compete for the
 * same disk, and each waits in the queue no longer than the checkpoints due before it.
 */
public final class BackgroundScheduler {
    private static final ScheduledThreadPoolExecutor LOG_SYNCS = newLane("betree-log-syncer");
    private static final ScheduledThreadPoolExecutor CHECKPOINTS = newLane("betree-checkpointer");

    private BackgroundScheduler() {
    }

    private static ScheduledThreadPoolExecutor newLane(String threadName) {
        ScheduledThreadPoolExecutor lane = new ScheduledThreadPoolExecutor(1,
                r -> EngineThreads.newDaemon(r, threadName));
        // A cancelled task leaves the queue at once: a closed environment's task must not stay
        // reachable (nor keep the thread alive) until its next due time.
        lane.setRemoveOnCancelPolicy(true);
        // Idle after a minute with nothing scheduled. While a task is scheduled the thread stays,
        // however long the delay: an executor keeps its last thread while its queue holds work.
        lane.setKeepAliveTime(60, TimeUnit.SECONDS);
        lane.allowCoreThreadTimeOut(true);
        return lane;
    }

    /**
     * Runs {@code sync} every {@code periodNanos} (first after one period) on the thread of the
     * periodic log syncs, until the returned task is cancelled.
     *
     * @param name what the task is, for diagnostics
     */
    public static PeriodicTask scheduleLogSync(String name, long periodNanos, Runnable sync) {
        return schedule(LOG_SYNCS, name, periodNanos, sync);
    }

    /**
     * Runs {@code checkpoint} every {@code periodNanos} (first after one period) on the thread of
     * the periodic checkpoints, until the returned task is cancelled.
     *
     * @param name what the task is, for diagnostics
     */
    public static PeriodicTask scheduleCheckpoint(String name, long periodNanos, Runnable checkpoint) {
        return schedule(CHECKPOINTS, name, periodNanos, checkpoint);
    }

    private static PeriodicTask schedule(ScheduledThreadPoolExecutor lane, String name, long periodNanos,
            Runnable body) {
        if (periodNanos <= 0) {
            throw new IllegalArgumentException("period must be positive: " + periodNanos + " ns");
        }
        PeriodicTask task = new PeriodicTask(name, body);
        task.start(t -> lane.scheduleWithFixedDelay(t, periodNanos, periodNanos, TimeUnit.NANOSECONDS));
        return task;
    }

    /**
     * Tasks waiting for their next run, of every environment (a run in progress is not counted);
     * for tests and diagnostics. Cancelled tasks are not counted: they leave at once.
     */
    public static int scheduledTasks() {
        return LOG_SYNCS.getQueue().size() + CHECKPOINTS.getQueue().size();
    }
}
