package io.betree.internal.log;

import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;

/**
 * One environment's task run again and again on a shared thread of {@link BackgroundScheduler}, and
 * the handle its owner cancels it with. {@link #cancel()} does what cancelling a
 * {@link ScheduledFuture} does not: it also waits out a run in progress, so that once it returns
 * the task neither runs nor starts again, and the owner may close what the task uses. It waits for
 * this task only: the other tasks on the same thread are none of its business.
 *
 * <p>The task should handle its own failures. One that escapes (a {@link RuntimeException} or an
 * {@link Error}) ends this task, as it would end a task of a {@link java.util.concurrent.ScheduledExecutorService},
 * and is kept for {@link #failure()}; the shared thread and the other tasks go on.
 *
 * <p>Thread-safe. Runs and {@link #cancel()} are serialized by a {@link ReentrantLock} rather than a
 * monitor: a run does I/O, and {@code cancel()} may wait for it on a caller's virtual thread, which
 * a monitor would pin to its carrier.
 */
public final class PeriodicTask {
    private final String name;
    private final Runnable task;
    /** Held for a whole run, and by {@link #cancel} to wait one out. */
    private final ReentrantLock running = new ReentrantLock();
    /** Set once; checked under {@link #running} before every run. */
    private volatile boolean cancelled;
    /** Assigned under {@link #running} before the first run can start. */
    private ScheduledFuture<?> future;
    private volatile Throwable failure;

    PeriodicTask(String name, Runnable task) {
        this.name = name;
        this.task = task;
    }

    /**
     * Hands the task to an executor through {@code schedule}, which returns its future; no run
     * starts before the future is known.
     */
    void start(Function<Runnable, ScheduledFuture<?>> schedule) {
        running.lock();
        try {
            future = schedule.apply(this::runOnce);
        } finally {
            running.unlock();
        }
    }

    /** One run, on the shared thread; nothing once cancelled or ended. */
    private void runOnce() {
        running.lock();
        try {
            if (cancelled) {
                return;
            }
            task.run();
        } catch (RuntimeException | Error e) {
            failure = e;
            end();
        } finally {
            running.unlock();
        }
    }

    /**
     * Stops the task: no run starts after this returns, and a run in progress (of this task only)
     * has ended. Idempotent; may be called from the task itself.
     */
    public void cancel() {
        cancelled = true;
        running.lock(); // Waits out a run in progress; a run that starts later sees cancelled.
        try {
            end();
        } finally {
            running.unlock();
        }
    }

    /** Whether the task was cancelled or ended by a failure. */
    public boolean isCancelled() {
        return cancelled;
    }

    /** The failure that ended the task, or {@code null}. */
    public Throwable failure() {
        return failure;
    }

    /** Under {@link #running}: no more runs, and the executor forgets the task. */
    private void end() {
        cancelled = true;
        if (future != null) {
            future.cancel(false);
        }
    }

    @Override
    public String toString() {
        return "PeriodicTask[" + name + (cancelled ? ", cancelled" : "") + "]";
    }
}
