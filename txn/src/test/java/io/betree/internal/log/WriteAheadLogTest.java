package io.betree.internal.log;

import static io.betree.internal.log.LogTestSupport.LARGE_SEGMENTS;
import static io.betree.internal.log.LogTestSupport.SMALL_SEGMENTS;
import static io.betree.internal.log.LogTestSupport.append;
import static io.betree.internal.log.LogTestSupport.payload;
import static io.betree.internal.log.LogTestSupport.readAll;
import static io.betree.internal.log.LogTestSupport.replay;
import static io.betree.internal.log.LogTestSupport.segments;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.betree.internal.log.LogTestSupport.Rec;
import io.betree.internal.storage.FaultInjectingStorageEnv;
import io.betree.internal.storage.StorageEnv;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class WriteAheadLogTest {

    @TempDir
    Path dir;

    private final StorageEnv env = StorageEnv.defaultEnv();

    @Test
    void emptyLogStartsAtZero() throws IOException {
        try (WriteAheadLog log = WriteAheadLog.open(env, dir, LARGE_SEGMENTS)) {
            assertEquals(List.of(), replay(log, 0));
            assertEquals(0, log.endLsn());
            assertEquals(0, log.durableLsn());
            assertEquals(0, log.firstLsn());
        }
        assertEquals(List.of(dir.resolve("wal-00000000000000000000.log")), segments(dir));
        assertEquals(SegmentHeader.SIZE, Files.size(segments(dir).get(0)));
    }

    @Test
    void everyRecordTypeRoundTripsThroughReopen() throws IOException {
        List<LogPayload> written = List.of(
                new CreateIndexRecord(1, "orders", "ZSTD", 3, 4 << 20, 64 << 10, 16),
                new CommitRecord(10, List.of(CommitRecord.Op.put(1, payload(1, 10), payload(2, 100)))),
                new CommitRecord(11, List.of(CommitRecord.Op.delete(1, payload(1, 10)))));
        List<Long> ends = new ArrayList<>();
        try (WriteAheadLog log = WriteAheadLog.open(env, dir, LARGE_SEGMENTS)) {
            replay(log, 0);
            long expectedEnd = 0;
            for (LogPayload p : written) {
                long end = log.append(p);
                expectedEnd += RecordFormat.HEADER_BYTES + p.encode().remaining();
                assertEquals(expectedEnd, end);
                assertEquals(end, log.endLsn());
                ends.add(end);
            }
            log.syncTo(log.endLsn());
            assertEquals(log.endLsn(), log.durableLsn());
        }
        List<LogPayload> read = new ArrayList<>();
        List<Long> lsns = new ArrayList<>();
        try (WriteAheadLog log = WriteAheadLog.open(env, dir, LARGE_SEGMENTS)) {
            log.replay(0, (lsn, type, p) -> {
                lsns.add(lsn);
                read.add(type.decode(p));
            });
            assertEquals(ends.get(ends.size() - 1), log.endLsn());
            assertEquals(log.endLsn(), log.durableLsn());
        }
        assertEquals(written, read);
        assertEquals(0L, lsns.get(0));
        for (int i = 1; i < lsns.size(); i++) {
            assertEquals(ends.get(i - 1), lsns.get(i), "a record starts where the previous one ends");
        }
    }

    @Test
    void appendsContinueAfterReopen() throws IOException {
        List<Rec> written = new ArrayList<>();
        for (int round = 0; round < 3; round++) {
            try (WriteAheadLog log = WriteAheadLog.open(env, dir, SMALL_SEGMENTS)) {
                assertEquals(written, replay(log, 0));
                for (int i = 0; i < 7; i++) {
                    written.add(append(log, payload(round * 100 + i, 50 + 37 * i)));
                }
            }
        }
        assertEquals(written, readAll(env, dir, SMALL_SEGMENTS));
    }

    @Test
    void replayFromAnLsnSkipsEarlierRecords() throws IOException {
        List<Rec> written = new ArrayList<>();
        try (WriteAheadLog log = WriteAheadLog.open(env, dir, SMALL_SEGMENTS)) {
            replay(log, 0);
            for (int i = 0; i < 40; i++) {
                written.add(append(log, payload(i, 10 + 13 * i % 200)));
            }
        }
        assertTrue(segments(dir).size() > 3);
        for (int from : new int[] {0, 1, 17, 39}) {
            try (WriteAheadLog log = WriteAheadLog.open(env, dir, SMALL_SEGMENTS)) {
                assertEquals(written.subList(from, 40), replay(log, written.get(from).lsn()), "from record " + from);
            }
        }
        try (WriteAheadLog log = WriteAheadLog.open(env, dir, SMALL_SEGMENTS)) {
            long midRecord = written.get(20).lsn() + 3;
            assertEquals(written.subList(21, 40), replay(log, midRecord));
        }
        try (WriteAheadLog log = WriteAheadLog.open(env, dir, SMALL_SEGMENTS)) {
            assertEquals(List.of(), replay(log, written.get(39).end()));
            assertEquals(written.get(39).end(), log.endLsn());
        }
    }

    @Test
    void segmentsRollAndOldOnesAreDeleted() throws IOException {
        List<Rec> written = new ArrayList<>();
        try (WriteAheadLog log = WriteAheadLog.open(env, dir, SMALL_SEGMENTS)) {
            replay(log, 0);
            for (int i = 0; i < 60; i++) {
                written.add(append(log, payload(i, 150)));
            }
            List<Path> files = segments(dir);
            assertTrue(files.size() >= 10, files.toString());
            long previousStart = -1;
            for (Path f : files) {
                assertTrue(Files.size(f) <= SMALL_SEGMENTS, f + " is " + Files.size(f) + " bytes");
                long start = SegmentFiles.startLsnOf(f.getFileName().toString());
                assertTrue(start > previousStart);
                previousStart = start;
            }
            long keepFrom = written.get(30).lsn();
            log.deleteSegmentsBefore(keepFrom);
            long first = log.firstLsn();
            assertTrue(first <= keepFrom && first > 0, "first " + first);
            assertEquals(first, SegmentFiles.startLsnOf(segments(dir).get(0).getFileName().toString()));
            assertTrue(segments(dir).size() < files.size());
            assertTrue(written.stream().anyMatch(r -> r.lsn() == first), "a segment starts at a record");

            log.deleteSegmentsBefore(Long.MAX_VALUE);
            assertEquals(1, segments(dir).size(), "the segment being appended to stays");
            written.add(append(log, payload(99, 10)));
        }
        try (WriteAheadLog log = WriteAheadLog.open(env, dir, SMALL_SEGMENTS)) {
            List<Rec> rest = replay(log, 0);
            assertEquals(written.subList(written.size() - rest.size(), written.size()), rest);
            assertEquals(log.firstLsn(), rest.get(0).lsn());
        }
    }

    @Test
    void aRecordLargerThanASegmentGetsASegmentOfItsOwn() throws IOException {
        List<Rec> written = new ArrayList<>();
        try (WriteAheadLog log = WriteAheadLog.open(env, dir, SMALL_SEGMENTS)) {
            replay(log, 0);
            written.add(append(log, payload(1, 10)));
            written.add(append(log, payload(2, 5000)));
            written.add(append(log, payload(3, 10)));
            written.add(append(log, new byte[0]));
        }
        assertEquals(3, segments(dir).size());
        assertEquals(written, readAll(env, dir, SMALL_SEGMENTS));
    }

    @Test
    void misuseIsRejected() throws IOException {
        ByteBuffer p = ByteBuffer.wrap(payload(1, 10));
        WriteAheadLog log = WriteAheadLog.open(env, dir, LARGE_SEGMENTS);
        assertThrows(IllegalStateException.class, () -> log.append(LogRecordType.COMMIT, p));
        assertThrows(IllegalStateException.class, log::endLsn);
        assertThrows(IllegalStateException.class, () -> log.syncTo(0));
        replay(log, 0);
        assertThrows(IllegalStateException.class, () -> replay(log, 0), "replay runs once");
        long end = log.append(LogRecordType.COMMIT, p);
        assertEquals(0, p.position(), "append must not move the payload");
        assertThrows(IllegalArgumentException.class, () -> log.syncTo(end + 1));
        log.close();
        log.close();
        assertThrows(IllegalStateException.class, () -> log.append(LogRecordType.COMMIT, p));
        log.syncTo(end);
        assertThrows(IllegalStateException.class, () -> log.deleteSegmentsBefore(end));

        WriteAheadLog again = WriteAheadLog.open(env, dir, LARGE_SEGMENTS);
        assertThrows(IllegalStateException.class, () -> again.replay(0, (lsn, type, payload) -> {
            again.append(LogRecordType.COMMIT, p);
        }), "a visitor cannot append");
        again.close();
        assertThrows(IllegalStateException.class, () -> replay(again, 0));
        assertThrows(IllegalArgumentException.class, () -> WriteAheadLog.open(env, dir, 10));
    }

    @Test
    void unrelatedFilesAndLeftoversAreHandled() throws IOException {
        Files.createDirectories(dir);
        Files.writeString(dir.resolve("betree.data"), "not a log");
        Files.writeString(dir.resolve("wal-1.log"), "not a segment name");
        Path leftover = dir.resolve(SegmentFiles.name(5000) + ".creating");
        Files.writeString(leftover, "half-made segment");
        try (WriteAheadLog log = WriteAheadLog.open(env, dir, LARGE_SEGMENTS)) {
            replay(log, 0);
            append(log, payload(1, 10));
        }
        assertFalse(Files.exists(leftover));
        assertTrue(Files.exists(dir.resolve("betree.data")));
        assertEquals(1, readAll(env, dir, LARGE_SEGMENTS).size());
    }

    @Test
    void periodicSyncMakesAppendsDurable() throws Exception {
        FaultInjectingStorageEnv faulty = new FaultInjectingStorageEnv(CountingStorageEnv.withoutSyncs());
        List<Rec> written = new ArrayList<>();
        WriteAheadLog log = WriteAheadLog.open(faulty, dir, SMALL_SEGMENTS);
        replay(log, 0);
        log.startPeriodicSync(Duration.ofMillis(5));
        assertThrows(IllegalStateException.class, () -> log.startPeriodicSync(Duration.ofMillis(5)));
        for (int i = 0; i < 10; i++) {
            written.add(append(log, payload(i, 30)));
        }
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (log.durableLsn() < log.endLsn() && System.nanoTime() < deadline) {
            Thread.sleep(2);
        }
        assertEquals(log.endLsn(), log.durableLsn());
        faulty.crash();
        assertEquals(written, readAll(faulty, dir, SMALL_SEGMENTS));
        log.close();
    }
}
