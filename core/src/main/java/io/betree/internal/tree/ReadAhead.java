package io.betree.internal.tree;

import io.betree.internal.memory.EngineThreads;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongConsumer;

/**
 * Reads of blocks a flush step will pin one after another, started together on the read-ahead
 * threads so that the disk serves them side by side. A leaf apply pins each basement that receives
 * messages in key order, and each one not in the cache was a read the flusher waited for before
 * the next could start: in a 64 MiB-cache delete-FIFO load the two flushers spent a third of their
 * time in some 19,000 basement reads of 25 KB, 3.4 ms each (docs/benchmarks.md).
 *
 * <p>The threads ({@value #THREADS}, daemons, ended after a minute idle) are shared by every tree of
 * the process, as the flushers are. A read that fails only loses its head start: the flusher pins
 * the block itself and meets the failure there.
 *
 * <p>One instance serves one step's reads of one kind (a leaf's basements, a node's buffers) on the
 * flusher's thread, or a point read's of the leaves beside its own while most reads miss
 * ({@link NodeStore#readAheadLeaves}) on the reader's; not thread-safe.
 */
final class ReadAhead implements AutoCloseable {
    /** Reads in flight across the process: few, as each thread mostly waits for the disk. */
    static final int THREADS = 4;
    private static final ThreadPoolExecutor READERS;

    static {
        READERS = new ThreadPoolExecutor(THREADS, THREADS, 60, TimeUnit.SECONDS, new LinkedBlockingQueue<>(),
                r -> EngineThreads.newDaemonAllocatingIndirectly(r, "betree-read-ahead"));
        READERS.allowCoreThreadTimeOut(true);
    }

    /**
     * Reads under way or queued for one step at most, so that a step's burst into the cache stays
     * bounded while a usual leaf apply or node step starts all its reads at once. In the
     * small-cache delete-FIFO, runs with every read started at once, with a window of four and of
     * sixteen differed less than runs of one of them did (docs/benchmarks.md).
     */
    static final int WINDOW = 16;

    /**
     * For a step with nothing to read ahead, the usual case while the tree fits in the cache: it
     * allocates nothing, and every method returns at once.
     */
    static final ReadAhead NONE = new ReadAhead(null);

    private final LongConsumer read;
    /**
     * Blocks to read once the window has room, in the order the step pins them; null until one is
     * added. A set, so that a leaf's hundred-odd basements are not each looked for in a list.
     */
    private LinkedHashSet<Long> waiting;
    /** Reads started, by block number, not yet awaited; null until one is added. */
    private Map<Long, Read> started;

    /** Read-ahead for one step, which reads a block by {@code read}. */
    ReadAhead(LongConsumer read) {
        this.read = read;
    }

    /** Reads {@code block} ahead: now, or once fewer than {@link #WINDOW} of this step's reads are under way. */
    void add(long block) {
        if (this == NONE) {
            throw new IllegalStateException("NONE reads nothing ahead");
        }
        if (started == null) {
            started = new HashMap<>();
            waiting = new LinkedHashSet<>();
        }
        if (!started.containsKey(block) && waiting.add(block)) {
            startWaiting();
        }
    }

    private void startWaiting() {
        while (started.size() < WINDOW && !waiting.isEmpty()) {
            Iterator<Long> first = waiting.iterator();
            long block = first.next();
            first.remove();
            Read r = new Read(block, read);
            started.put(block, r);
            READERS.execute(r);
        }
    }

    /**
     * Before the caller pins {@code block}: waits for its read if one began, or keeps it from
     * beginning if it has not (the caller reads it sooner itself); then starts the next.
     */
    void await(long block) {
        if (started == null) {
            return;
        }
        Read r = started.remove(block);
        if (r != null) {
            r.finish();
        } else {
            waiting.remove(block);
        }
        startWaiting();
    }

    /**
     * Keeps the reads not yet begun from beginning and waits for the others: a read that ended
     * after the apply could cache a block the apply has freed meanwhile.
     */
    @Override
    public void close() {
        if (started == null) {
            return;
        }
        waiting.clear();
        // Those still queued are given up first: waited for one by one, they would begin while
        // the reads before them ended.
        for (Read r : started.values()) {
            r.giveUpIfQueued();
        }
        for (Read r : started.values()) {
            r.finish();
        }
        started.clear();
    }

    /** One read, which runs at most once and only if nobody gave it up first. */
    private static final class Read implements Runnable {
        private static final int QUEUED = 0;
        private static final int RUNNING = 1;
        private static final int GIVEN_UP = 2;

        private final long block;
        private final LongConsumer read;
        private final AtomicInteger state = new AtomicInteger(QUEUED);
        private final CountDownLatch ended = new CountDownLatch(1);

        Read(long block, LongConsumer read) {
            this.block = block;
            this.read = read;
        }

        @Override
        public void run() {
            if (!state.compareAndSet(QUEUED, RUNNING)) {
                return;
            }
            try {
                read.accept(block);
            } catch (RuntimeException e) {
                // Only the head start is lost: the flusher's own pin reads the block and reports.
            } finally {
                ended.countDown();
            }
        }

        /** Gives the read up if it has not begun; returns whether it did (or had). */
        boolean giveUpIfQueued() {
            return state.compareAndSet(QUEUED, GIVEN_UP) || state.get() == GIVEN_UP;
        }

        /** Gives the read up if it has not begun; otherwise waits until it has ended. */
        void finish() {
            if (giveUpIfQueued()) {
                return;
            }
            boolean interrupted = false;
            while (true) {
                try {
                    ended.await();
                    break;
                } catch (InterruptedException e) {
                    interrupted = true; // it must end before the caller goes on: see close()
                }
            }
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
