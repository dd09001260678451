package io.betree.internal.log;

import io.betree.internal.fault.CorruptionException;
import io.betree.internal.log.RecordFormat.Examined;
import io.betree.internal.log.SegmentFiles.Segment;
import io.betree.internal.storage.FileHandle;
import io.betree.internal.storage.StorageEnv;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;

/**
 * Reads a log directory and decides where its valid records end, without changing anything: the
 * recovery rules of the write-ahead log live here, and {@link WriteAheadLog#replay} applies the
 * outcome (truncating a torn tail) while tools such as a log dump only report it.
 *
 * <p>Rules, checked segment by segment in LSN order:
 * <ul>
 *   <li>Each segment must start at the LSN where the previous one ends; otherwise records are
 *       missing and the read fails with a {@link CorruptionException} naming the later segment.</li>
 *   <li>Every record must be complete, carry its own position as LSN, pass its CRC and have a known
 *       type. In a segment that is not the last one, any failure is corruption: segments are synced
 *       before the next one is created.</li>
 *   <li>In the last segment, the first bad record and everything after it form a <em>torn tail</em>
 *       (unsynced writes cut short by a crash) and are discarded, unless a valid record found after
 *       it (at any offset, by scanning) was appended when the log was already durable past the bad
 *       record's position (its synced LSN says so). Then durable data was damaged: the read fails
 *       with a {@link CorruptionException} naming the file and the bad record's offset.</li>
 * </ul>
 */
public final class LogReader {

    /**
     * The outcome of a read.
     *
     * @param firstLsn the LSN the oldest segment starts at
     * @param endLsn the LSN after the last valid record: where the log continues
     * @param lastSegment the last segment file, or null if the directory holds none
     * @param lastSegmentBytes the bytes of the last segment that hold its header and valid records
     * @param discardedBytes the bytes after them that form a torn tail (0 if none)
     * @param discardReason what is wrong with the first discarded record, or null if none
     */
    public record Result(long firstLsn, long endLsn, Path lastSegment, long lastSegmentBytes, long discardedBytes,
            String discardReason) {
    }

    /** Where the valid part of one segment ends. */
    private record SegmentEnd(long validBytes, String discardReason) {
    }

    private LogReader() {
    }

    /**
     * Reads the log in {@code dir} without modifying it, visiting every valid record with an LSN of at
     * least {@code fromLsn}. Segments that end at or before {@code fromLsn} are skipped unread, except
     * for a check that their sizes leave no gap.
     *
     * @throws CorruptionException if a segment header is foreign or damaged, or records are damaged or
     *     missing anywhere but in a torn tail; the visitor may have seen the records before the damage
     * @throws IOException if a file cannot be read, or as thrown by the visitor
     */
    public static Result read(StorageEnv env, Path dir, long fromLsn, RecordVisitor visitor) throws IOException {
        return scan(env, SegmentFiles.list(env, dir, false), fromLsn, visitor);
    }

    /** {@link #read} over already listed segments. */
    static Result scan(StorageEnv env, List<Segment> segments, long fromLsn, RecordVisitor visitor)
            throws IOException {
        if (segments.isEmpty()) {
            return new Result(0, 0, null, 0, 0, null);
        }
        long expected = segments.get(0).startLsn();
        for (int i = 0; i < segments.size(); i++) {
            Segment seg = segments.get(i);
            boolean last = i == segments.size() - 1;
            if (seg.startLsn() != expected) {
                throw new CorruptionException(seg.path(), "gap in the log at offset 0: segment starts at LSN "
                        + seg.startLsn() + " but the previous segment ends at LSN " + expected);
            }
            try (FileHandle file = env.open(seg.path())) {
                long size = file.size();
                if (size < SegmentHeader.SIZE) {
                    throw new CorruptionException(seg.path(), "segment shorter than its header: " + size + " bytes");
                }
                if (!last && segments.get(i + 1).startLsn() <= fromLsn) {
                    expected = seg.startLsn() + size - SegmentHeader.SIZE;
                    continue;
                }
                SegmentWindow window = new SegmentWindow(file, size);
                SegmentEnd end = scanSegment(seg, window, last, fromLsn, visitor);
                expected = lsnAt(seg, end.validBytes());
                if (last) {
                    return new Result(segments.get(0).startLsn(), expected, seg.path(), end.validBytes(),
                            size - end.validBytes(), end.discardReason());
                }
            }
        }
        throw new AssertionError("unreachable: the last segment returns");
    }

    /** The payload of the record of type {@code type} at {@code lsn}; see {@link WriteAheadLog#recordDuringReplay}. */
    static java.nio.ByteBuffer recordAt(StorageEnv env, List<Segment> segments, long lsn, LogRecordType type)
            throws IOException {
        for (int i = segments.size() - 1; i >= 0; i--) {
            Segment seg = segments.get(i);
            if (seg.startLsn() > lsn) {
                continue;
            }
            try (FileHandle file = env.open(seg.path())) {
                long offset = lsn - seg.startLsn() + SegmentHeader.SIZE;
                Examined rec = RecordFormat.examine(new SegmentWindow(file, file.size()), offset, lsn);
                if (!rec.valid()) {
                    throw corrupt(seg, offset, "a record the log refers to is not there: " + rec.problem());
                }
                if (rec.typeCode() != type.code()) {
                    throw corrupt(seg, offset, "a " + type + " record was expected, found type code "
                            + (rec.typeCode() & 0xff));
                }
                java.nio.ByteBuffer copy = java.nio.ByteBuffer.allocate(rec.payload().remaining());
                return copy.put(rec.payload().duplicate()).flip();
            }
        }
        throw new CorruptionException(segments.isEmpty() ? Path.of(".") : segments.get(0).path().getParent(),
                "the log refers to a record at LSN " + lsn + ", which precedes its oldest segment");
    }

    /** Visits the valid records of one segment and returns where they end. */
    private static SegmentEnd scanSegment(Segment seg, SegmentWindow window, boolean last, long fromLsn,
            RecordVisitor visitor) throws IOException {
        long offset = SegmentHeader.SIZE;
        while (offset < window.size()) {
            long lsn = lsnAt(seg, offset);
            Examined rec = RecordFormat.examine(window, offset, lsn);
            if (!rec.valid()) {
                if (!last) {
                    throw corrupt(seg, offset, rec.problem() + ", in a segment that is not the last one");
                }
                checkTornTail(seg, window, offset, rec.problem());
                return new SegmentEnd(offset, rec.problem());
            }
            LogRecordType type = LogRecordType.fromCode(rec.typeCode());
            if (type == null) {
                throw corrupt(seg, offset, "unknown record type code " + (rec.typeCode() & 0xff));
            }
            if (rec.syncedLsn() < 0 || rec.syncedLsn() > lsn) {
                throw corrupt(seg, offset, "synced LSN " + rec.syncedLsn() + " is beyond the record's own LSN");
            }
            if (lsn >= fromLsn) {
                visitor.visit(lsn, type, rec.payload());
            }
            offset += rec.size();
        }
        return new SegmentEnd(offset, null);
    }

    /**
     * Decides whether the bad record at {@code badOffset} of the last segment starts a torn tail:
     * scans every later offset for a valid record whose synced LSN shows the bad record had already
     * been durable, and throws if one is found.
     */
    private static void checkTornTail(Segment seg, SegmentWindow window, long badOffset, String problem)
            throws IOException {
        long badLsn = lsnAt(seg, badOffset);
        for (long q = badOffset + 1; q + RecordFormat.HEADER_BYTES <= window.size(); q++) {
            long lsn = lsnAt(seg, q);
            Examined rec = RecordFormat.examine(window, q, lsn);
            if (!rec.valid()) {
                continue;
            }
            if (rec.syncedLsn() > badLsn && rec.syncedLsn() <= lsn) {
                throw corrupt(seg, badOffset, problem + "; the valid record at offset " + q + " (LSN " + lsn
                        + ") was appended when the log was durable up to LSN " + rec.syncedLsn()
                        + ", so this record had been synced");
            }
            q += rec.size() - 1;
        }
    }

    /** The LSN of the byte at {@code offset} of {@code seg}. */
    private static long lsnAt(Segment seg, long offset) {
        return seg.startLsn() + offset - SegmentHeader.SIZE;
    }

    private static CorruptionException corrupt(Segment seg, long offset, String detail) {
        return new CorruptionException(seg.path(), "record at offset " + offset + " (LSN " + lsnAt(seg, offset)
                + "): " + detail);
    }
}
