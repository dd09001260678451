package io.betree.internal.log;

import static io.betree.internal.log.LogTestSupport.LARGE_SEGMENTS;
import static io.betree.internal.log.LogTestSupport.append;
import static io.betree.internal.log.LogTestSupport.flipByte;
import static io.betree.internal.log.LogTestSupport.offsetOf;
import static io.betree.internal.log.LogTestSupport.payload;
import static io.betree.internal.log.LogTestSupport.readAll;
import static io.betree.internal.log.LogTestSupport.replay;
import static io.betree.internal.log.LogTestSupport.segments;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.betree.internal.fault.BetreeException;
import io.betree.internal.fault.BetreeIOException;
import io.betree.internal.fault.CorruptionException;
import io.betree.internal.log.LogTestSupport.Rec;
import io.betree.internal.storage.FaultInjectingStorageEnv;
import io.betree.internal.storage.StorageEnv;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Torn tails, crashes, damaged records and foreign files. */
class WriteAheadLogRecoveryTest {

    private static final long SEGMENT = 512;
    /** Several records per segment, some longer than two 512-byte sectors so that tears cut them. */
    private static final long RANDOM_CRASH_SEGMENT = 4096;

    @TempDir
    Path dir;

    private final StorageEnv env = StorageEnv.defaultEnv();

    @Test
    void aTornWriteIsTruncatedAndTheLogContinues() throws IOException {
        FaultInjectingStorageEnv faulty = new FaultInjectingStorageEnv(CountingStorageEnv.withoutSyncs());
        List<Rec> written = new ArrayList<>();
        WriteAheadLog log = WriteAheadLog.open(faulty, dir, LARGE_SEGMENTS);
        replay(log, 0);
        for (int i = 0; i < 5; i++) {
            written.add(append(log, payload(i, 100)));
            log.syncTo(log.endLsn());
        }
        faulty.tearWrite(1, 10);
        IOException torn = assertThrows(IOException.class, () -> append(log, payload(100, 200)));
        assertTrue(torn.getMessage().contains("simulated torn write"), torn.getMessage());
        BetreeIOException refused = assertThrows(BetreeIOException.class, () -> append(log, payload(101, 5)));
        assertTrue(refused.getMessage().contains("simulated torn write"), refused.getMessage());
        log.syncTo(written.get(4).end());
        log.close();

        Path segment = segments(dir).get(0);
        long validSize = offsetOf(written.get(4).end(), 0);
        assertEquals(validSize + 10, Files.size(segment), "the torn prefix is on disk");
        try (WriteAheadLog again = WriteAheadLog.open(faulty, dir, LARGE_SEGMENTS)) {
            assertEquals(written, replay(again, 0));
            assertEquals(validSize, Files.size(segment), "the torn tail is truncated");
            assertEquals(written.get(4).end(), again.endLsn());
            written.add(append(again, payload(6, 60)));
        }
        assertEquals(written, readAll(faulty, dir, LARGE_SEGMENTS));
    }

    @Test
    void aCrashKeepsExactlyTheSyncedPrefix() throws IOException {
        Random random = new Random(7);
        for (int run = 0; run < 20; run++) {
            Path d = dir.resolve("run" + run);
            FaultInjectingStorageEnv faulty = new FaultInjectingStorageEnv(CountingStorageEnv.withoutSyncs());
            List<Rec> written = new ArrayList<>();
            WriteAheadLog log = WriteAheadLog.open(faulty, d, SEGMENT);
            replay(log, 0);
            for (int i = 0; i < 30; i++) {
                written.add(append(log, payload(run * 1000L + i, random.nextInt(120))));
                if (random.nextInt(5) == 0) {
                    log.syncTo(log.endLsn());
                }
            }
            long durable = log.durableLsn();
            faulty.crash();
            List<Rec> survivors = readAll(faulty, d, SEGMENT);
            int synced = (int) written.stream().filter(r -> r.end() <= durable).count();
            assertEquals(written.subList(0, synced), survivors, "run " + run);
        }
    }

    @Test
    void aRandomCrashLeavesAPrefixHoldingEveryConfirmedRecord() throws IOException {
        int truncatedRuns = 0;
        for (int run = 0; run < 100; run++) {
            Random random = new Random(run);
            Path d = dir.resolve("run" + run);
            FaultInjectingStorageEnv faulty = new FaultInjectingStorageEnv(CountingStorageEnv.withoutSyncs());
            List<Rec> written = new ArrayList<>();
            WriteAheadLog log = WriteAheadLog.open(faulty, d, RANDOM_CRASH_SEGMENT);
            replay(log, 0);
            int n = 5 + random.nextInt(30);
            for (int i = 0; i < n; i++) {
                written.add(append(log, payload(run * 1000L + i, random.nextInt(1200))));
                if (random.nextInt(4) == 0) {
                    log.syncTo(log.endLsn());
                }
            }
            long durable = log.durableLsn();
            int confirmed = (int) written.stream().filter(r -> r.end() <= durable).count();
            faulty.crash(random);

            List<Rec> survivors;
            Rec extra;
            try (WriteAheadLog again = WriteAheadLog.open(faulty, d, RANDOM_CRASH_SEGMENT)) {
                survivors = replay(again, 0);
                extra = append(again, payload(-run, 40));
            }
            String context = "run " + run + ": " + survivors.size() + " of " + n + " survived, " + confirmed
                    + " confirmed";
            assertTrue(survivors.size() >= confirmed, context);
            assertEquals(written.subList(0, survivors.size()), survivors, context);
            List<Rec> expected = new ArrayList<>(survivors);
            expected.add(extra);
            assertEquals(expected, readAll(faulty, d, RANDOM_CRASH_SEGMENT), context);
            if (survivors.size() < n) {
                truncatedRuns++;
            }
        }
        assertTrue(truncatedRuns > 15, "crashes should often lose unsynced records: " + truncatedRuns);
    }

    @Test
    void damageFollowedByRecordsAppendedAfterItWasSyncedIsCorruption() throws IOException {
        List<Rec> written = new ArrayList<>();
        try (WriteAheadLog log = WriteAheadLog.open(env, dir, LARGE_SEGMENTS)) {
            replay(log, 0);
            for (int i = 0; i < 10; i++) {
                written.add(append(log, payload(i, 64)));
                log.syncTo(log.endLsn());
            }
        }
        Path segment = segments(dir).get(0);
        long size = Files.size(segment);
        long victim = offsetOf(written.get(4).lsn(), 0);
        flipByte(segment, victim + RecordFormat.HEADER_BYTES + 30);
        List<Rec> seen = new ArrayList<>();
        WriteAheadLog log = WriteAheadLog.open(env, dir, LARGE_SEGMENTS);
        CorruptionException e = assertThrows(CorruptionException.class, () -> log.replay(0,
                (lsn, type, p) -> seen.add(new Rec(lsn, type, new byte[0]))));
        assertEquals(segment, e.file());
        assertTrue(e.getMessage().contains("offset " + victim + " "), e.getMessage());
        assertTrue(e.getMessage().contains("CRC mismatch"), e.getMessage());
        assertEquals(4, seen.size(), "records before the damage were visited");
        assertThrows(IllegalStateException.class, () -> append(log, payload(1, 1)));
        log.close();
        assertEquals(size, Files.size(segment), "nothing is truncated");
        assertThrows(CorruptionException.class, () -> LogReader.read(env, dir, 0, (lsn, type, p) -> { }));
    }

    @Test
    void damageInASealedSegmentIsCorruption() throws IOException {
        try (WriteAheadLog log = WriteAheadLog.open(env, dir, SEGMENT)) {
            replay(log, 0);
            for (int i = 0; i < 20; i++) {
                append(log, payload(i, 100));
            }
        }
        List<Path> files = segments(dir);
        assertTrue(files.size() > 2);
        Path second = files.get(1);
        long start = SegmentFiles.startLsnOf(second.getFileName().toString());
        flipByte(second, Files.size(second) - 3);
        CorruptionException e = assertThrows(CorruptionException.class, () -> readAll(env, dir, SEGMENT));
        assertEquals(second, e.file());
        assertTrue(e.getMessage().contains("not the last"), e.getMessage());
        // Replaying from beyond the damaged segment skips it unread.
        long from = SegmentFiles.startLsnOf(files.get(2).getFileName().toString());
        try (WriteAheadLog log = WriteAheadLog.open(env, dir, SEGMENT)) {
            assertFalse(replay(log, from).isEmpty());
            assertTrue(start < from);
        }
    }

    @Test
    void damageAmongRecordsSyncedTogetherIsTreatedAsATornTail() throws IOException {
        // Records written in one unsynced batch cannot vouch for each other: after a crash any of them
        // may be missing while later ones made it to disk. Only a record appended after the damaged one
        // was durable proves damage; without one the damaged record and all after it are discarded.
        List<Rec> written = new ArrayList<>();
        try (WriteAheadLog log = WriteAheadLog.open(env, dir, LARGE_SEGMENTS)) {
            replay(log, 0);
            for (int i = 0; i < 10; i++) {
                written.add(append(log, payload(i, 64)));
            }
        }
        flipByte(segments(dir).get(0), offsetOf(written.get(7).lsn(), 0) + 40);
        assertEquals(written.subList(0, 7), readAll(env, dir, LARGE_SEGMENTS));
        assertEquals(offsetOf(written.get(7).lsn(), 0), Files.size(segments(dir).get(0)));
    }

    @Test
    void aMissingSegmentIsAGap() throws IOException {
        try (WriteAheadLog log = WriteAheadLog.open(env, dir, SEGMENT)) {
            replay(log, 0);
            for (int i = 0; i < 20; i++) {
                append(log, payload(i, 100));
            }
        }
        List<Path> files = segments(dir);
        Files.delete(files.get(1));
        CorruptionException e = assertThrows(CorruptionException.class, () -> readAll(env, dir, SEGMENT));
        assertEquals(files.get(2), e.file());
        assertTrue(e.getMessage().contains("gap in the log at offset 0"), e.getMessage());
        long from = SegmentFiles.startLsnOf(files.get(3).getFileName().toString());
        try (WriteAheadLog log = WriteAheadLog.open(env, dir, SEGMENT)) {
            assertThrows(CorruptionException.class, () -> replay(log, from), "skipped segments are checked too");
        }
    }

    @Test
    void foreignAndDamagedHeadersAreRejected() throws IOException {
        Files.createDirectories(dir);
        Path first = dir.resolve(SegmentFiles.name(0));
        Files.writeString(first, "#!/bin/sh\necho this is a shell script, not a log segment\n");
        CorruptionException foreign = assertThrows(CorruptionException.class,
                () -> WriteAheadLog.open(env, dir, SEGMENT));
        assertEquals(first, foreign.file());
        assertTrue(foreign.getMessage().contains("bad magic"), foreign.getMessage());

        Files.write(first, "BeTreeWL".getBytes(StandardCharsets.US_ASCII));
        CorruptionException shortHeader = assertThrows(CorruptionException.class,
                () -> WriteAheadLog.open(env, dir, SEGMENT));
        assertTrue(shortHeader.getMessage().contains("truncated"), shortHeader.getMessage());

        Files.delete(first);
        readAll(env, dir, SEGMENT);
        flipByte(first, 20);
        CorruptionException damaged = assertThrows(CorruptionException.class,
                () -> WriteAheadLog.open(env, dir, SEGMENT));
        assertEquals(first, damaged.file());
        assertTrue(damaged.getMessage().contains("CRC"), damaged.getMessage());

        flipByte(first, 20);
        Path renamed = dir.resolve(SegmentFiles.name(4096));
        Files.move(first, renamed);
        CorruptionException misnamed = assertThrows(CorruptionException.class,
                () -> WriteAheadLog.open(env, dir, SEGMENT));
        assertEquals(renamed, misnamed.file());
        assertTrue(misnamed.getMessage().contains("file name says 4096"), misnamed.getMessage());

        ByteBuffer newer = ByteBuffer.allocate(SegmentHeader.SIZE).put("BeTreeWL".getBytes(StandardCharsets.US_ASCII))
                .putInt(2).putInt(SegmentHeader.SIZE).putLong(4096).putInt(0);
        CRC32C crc = new CRC32C();
        crc.update(newer.array(), 0, 28);
        newer.putInt((int) crc.getValue());
        Files.write(renamed, newer.array());
        BetreeException future = assertThrows(BetreeException.class, () -> WriteAheadLog.open(env, dir, SEGMENT));
        assertFalse(future instanceof CorruptionException, future.toString());
        assertTrue(future.getMessage().contains("upgrade"), future.getMessage());
    }

    @Test
    void aRecordWithAnUnknownTypeIsCorruption() throws IOException {
        try (WriteAheadLog log = WriteAheadLog.open(env, dir, LARGE_SEGMENTS)) {
            replay(log, 0);
            append(log, payload(1, 10));
        }
        Path segment = segments(dir).get(0);
        // Rewrite the record with type code 99 and a correct CRC.
        byte[] bytes = Files.readAllBytes(segment);
        ByteBuffer record = ByteBuffer.allocate(RecordFormat.size(10));
        RecordFormat.encode(record, 0, 0, LogRecordType.COMMIT, ByteBuffer.wrap(payload(1, 10)));
        byte[] r = record.array();
        r[24] = 99;
        CRC32C crc = new CRC32C();
        crc.update(r, 0, 4);
        crc.update(r, 8, r.length - 8);
        ByteBuffer.wrap(r).putInt(4, (int) crc.getValue());
        System.arraycopy(r, 0, bytes, SegmentHeader.SIZE, r.length);
        Files.write(segment, bytes);
        CorruptionException e = assertThrows(CorruptionException.class, () -> readAll(env, dir, LARGE_SEGMENTS));
        assertTrue(e.getMessage().contains("unknown record type code 99"), e.getMessage());
    }
}
