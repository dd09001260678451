package io.betree.internal.log;

import static io.betree.internal.log.LogTestSupport.readAll;
import static io.betree.internal.log.LogTestSupport.replay;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.betree.internal.log.LogTestSupport.Rec;
import io.betree.internal.storage.FaultInjectingStorageEnv;
import io.betree.internal.storage.StorageEnv;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Concurrent commits share syncs and every confirmed commit is durable. */
class GroupCommitTest {

    private static final int THREADS = 16;
    private static final int COMMITS_PER_THREAD = 50;

    @TempDir
    Path dir;

    /** A commit payload naming its thread and sequence number, padded to vary the size. */
    private static ByteBuffer commit(int thread, int seq) {
        return ByteBuffer.allocate(8 + (seq * 7 + thread) % 100).putInt(thread).putInt(seq).clear();
    }

    /**
     * Runs {@link #THREADS} threads that each append and sync {@link #COMMITS_PER_THREAD} commits,
     * checking after each syncTo that the commit is durable; returns the failures.
     */
    private static Queue<Throwable> commitConcurrently(WriteAheadLog log) throws InterruptedException {
        Queue<Throwable> failures = new ConcurrentLinkedQueue<>();
        CountDownLatch start = new CountDownLatch(1);
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < THREADS; t++) {
            int thread = t;
            threads.add(new Thread(() -> {
                try {
                    start.await();
                    for (int seq = 0; seq < COMMITS_PER_THREAD; seq++) {
                        long end = log.append(LogRecordType.COMMIT, commit(thread, seq));
                        log.syncTo(end);
                        if (log.durableLsn() < end) {
                            throw new AssertionError("syncTo(" + end + ") returned at " + log.durableLsn());
                        }
                    }
                } catch (Throwable e) {
                    failures.add(e);
                }
            }));
        }
        threads.forEach(Thread::start);
        start.countDown();
        for (Thread t : threads) {
            t.join();
        }
        return failures;
    }

    /** Checks that the log holds every commit, each thread's in order. */
    private static void checkAllCommits(List<Rec> records) {
        assertEquals(THREADS * COMMITS_PER_THREAD, records.size());
        int[] next = new int[THREADS];
        for (Rec r : records) {
            ByteBuffer p = ByteBuffer.wrap(r.payload());
            int thread = p.getInt();
            assertEquals(next[thread]++, p.getInt(), "commits of thread " + thread + " in order");
        }
    }

    @Test
    void sixteenCommittingThreadsShareSyncs() throws Exception {
        CountingStorageEnv env = new CountingStorageEnv(StorageEnv.defaultEnv(), 1000, false);
        Queue<Throwable> failures;
        long syncs;
        try (WriteAheadLog log = WriteAheadLog.open(env, dir, 64 << 10)) {
            replay(log, 0);
            long before = env.syncCount();
            failures = commitConcurrently(log);
            syncs = env.syncCount() - before;
        }
        assertTrue(failures.isEmpty(), failures.toString());
        int commits = THREADS * COMMITS_PER_THREAD;
        assertTrue(syncs * 4 <= commits, syncs + " syncs for " + commits + " commits");
        checkAllCommits(readAll(env, dir, 64 << 10));
    }

    @Test
    void everyConfirmedCommitSurvivesACrash() throws Exception {
        FaultInjectingStorageEnv env = new FaultInjectingStorageEnv(CountingStorageEnv.withoutSyncs());
        WriteAheadLog log = WriteAheadLog.open(env, dir, 4096);
        replay(log, 0);
        Queue<Throwable> failures = commitConcurrently(log);
        assertTrue(failures.isEmpty(), failures.toString());
        // No sync count here: this env holds one lock across every write and sync and its syncs take
        // no time, so commits cannot overlap a sync; the counting env above measures grouping.
        env.crash();
        checkAllCommits(readAll(env, dir, 4096));
    }
}
