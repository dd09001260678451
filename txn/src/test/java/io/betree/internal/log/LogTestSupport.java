package io.betree.internal.log;

import io.betree.internal.storage.StorageEnv;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;

/** Helpers shared by the log tests: records, payloads, whole-log reads and file damage. */
final class LogTestSupport {

    /** Segment size of tests that want many segments. */
    static final long SMALL_SEGMENTS = 1024;
    /** Segment size of tests that want one segment. */
    static final long LARGE_SEGMENTS = 64L << 20;

    private LogTestSupport() {
    }

    /** A record as replay saw it, compared by content. */
    record Rec(long lsn, LogRecordType type, byte[] payload) {
        @Override
        public boolean equals(Object o) {
            return o instanceof Rec r && r.lsn == lsn && r.type == type && Arrays.equals(r.payload, payload);
        }

        @Override
        public int hashCode() {
            return Long.hashCode(lsn) * 31 + Arrays.hashCode(payload);
        }

        @Override
        public String toString() {
            return "Rec[" + lsn + " " + type + " " + payload.length + " bytes]";
        }

        /** The LSN after this record. */
        long end() {
            return lsn + RecordFormat.HEADER_BYTES + payload.length;
        }
    }

    /** A payload of {@code size} bytes derived from {@code seed}. */
    static byte[] payload(long seed, int size) {
        byte[] b = new byte[size];
        new Random(seed).nextBytes(b);
        return b;
    }

    /** Appends a COMMIT record with {@code payload} and returns what replay will see for it. */
    static Rec append(WriteAheadLog log, byte[] payload) throws IOException {
        long end = log.append(LogRecordType.COMMIT, ByteBuffer.wrap(payload));
        return new Rec(end - RecordFormat.HEADER_BYTES - payload.length, LogRecordType.COMMIT, payload);
    }

    /** Replays {@code log} from {@code fromLsn}, collecting the records. */
    static List<Rec> replay(WriteAheadLog log, long fromLsn) throws IOException {
        List<Rec> out = new ArrayList<>();
        log.replay(fromLsn, (lsn, type, p) -> {
            byte[] bytes = new byte[p.remaining()];
            p.get(bytes);
            out.add(new Rec(lsn, type, bytes));
        });
        return out;
    }

    /** Opens the log in {@code dir}, replays it from the start and closes it. */
    static List<Rec> readAll(StorageEnv env, Path dir, long segmentBytes) throws IOException {
        try (WriteAheadLog log = WriteAheadLog.open(env, dir, segmentBytes)) {
            return replay(log, 0);
        }
    }

    /** The segment files in {@code dir}, oldest first. */
    static List<Path> segments(Path dir) throws IOException {
        try (Stream<Path> s = Files.list(dir)) {
            return s.filter(p -> SegmentFiles.startLsnOf(p.getFileName().toString()) >= 0).sorted().toList();
        }
    }

    /** The file offset of the record with LSN {@code lsn} in the segment starting at {@code startLsn}. */
    static long offsetOf(long lsn, long startLsn) {
        return SegmentHeader.SIZE + lsn - startLsn;
    }

    /** Flips all bits of the byte at {@code offset} of {@code path}. */
    static void flipByte(Path path, long offset) throws IOException {
        try (FileChannel ch = FileChannel.open(path, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            ByteBuffer b = ByteBuffer.allocate(1);
            ch.read(b, offset);
            b.put(0, (byte) ~b.get(0));
            b.rewind();
            ch.write(b, offset);
        }
    }
}
