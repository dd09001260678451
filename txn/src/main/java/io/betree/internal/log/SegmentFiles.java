package io.betree.internal.log;

import io.betree.internal.storage.FileHandle;
import io.betree.internal.storage.StorageEnv;
import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Naming, listing and creation of log segment files. A segment is named {@code wal-<start LSN>.log},
 * the LSN in 20 zero-padded decimal digits so that names sort by LSN. A new segment is built under
 * {@code <name>.creating}, synced, renamed and its directory synced, so a file with a segment name
 * always has a complete, durable header; a leftover {@code .creating} file is garbage.
 */
final class SegmentFiles {

    private static final String PREFIX = "wal-";
    private static final String SUFFIX = ".log";
    private static final String CREATING = ".creating";
    private static final int DIGITS = 20;

    /**
     * A segment file.
     *
     * @param path its path
     * @param startLsn the LSN of its first record (or of the next append, when it has none)
     */
    record Segment(Path path, long startLsn) {
    }

    private SegmentFiles() {
    }

    /** The file name of the segment starting at {@code startLsn}. */
    static String name(long startLsn) {
        return String.format("%s%0" + DIGITS + "d%s", PREFIX, startLsn, SUFFIX);
    }

    /** The start LSN in a segment file name, or -1 if {@code fileName} is not one. */
    static long startLsnOf(String fileName) {
        if (!fileName.startsWith(PREFIX) || !fileName.endsWith(SUFFIX)
                || fileName.length() != PREFIX.length() + DIGITS + SUFFIX.length()) {
            return -1;
        }
        String digits = fileName.substring(PREFIX.length(), PREFIX.length() + DIGITS);
        for (int i = 0; i < digits.length(); i++) {
            if (digits.charAt(i) < '0' || digits.charAt(i) > '9') {
                return -1;
            }
        }
        try {
            return Long.parseLong(digits);
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    /**
     * The segments in {@code dir}, ascending by start LSN, each with its header validated. Files whose
     * names are not segment names are ignored.
     *
     * @param removeLeftovers whether to delete leftover {@code .creating} files of interrupted creations
     * @throws io.betree.internal.fault.CorruptionException if a segment's header is damaged or foreign
     */
    static List<Segment> list(StorageEnv env, Path dir, boolean removeLeftovers) throws IOException {
        List<Segment> segments = new ArrayList<>();
        for (Path p : env.list(dir)) {
            String name = p.getFileName().toString();
            if (name.endsWith(CREATING) && startLsnOf(name.substring(0, name.length() - CREATING.length())) >= 0) {
                if (removeLeftovers) {
                    env.delete(p);
                }
                continue;
            }
            long start = startLsnOf(name);
            if (start >= 0) {
                segments.add(new Segment(p, readHeader(env, p, start)));
            }
        }
        segments.sort((a, b) -> Long.compare(a.startLsn(), b.startLsn()));
        return segments;
    }

    /** Reads and validates the header of {@code file}, returning its start LSN. */
    private static long readHeader(StorageEnv env, Path file, long nameLsn) throws IOException {
        try (FileHandle h = env.open(file)) {
            ByteBuffer header = ByteBuffer.allocate((int) Math.min(SegmentHeader.SIZE, h.size()));
            try {
                h.readFully(header, 0);
            } catch (EOFException e) {
                // The file shrank meanwhile; validate what was read.
            }
            return SegmentHeader.decode(file, header.flip(), nameLsn);
        }
    }

    /**
     * Creates the segment starting at {@code startLsn} durably: header written and synced under a
     * temporary name, renamed, directory synced.
     */
    static Segment create(StorageEnv env, Path dir, long startLsn) throws IOException {
        Path target = dir.resolve(name(startLsn));
        Path temp = dir.resolve(name(startLsn) + CREATING);
        env.delete(temp);
        try (FileHandle h = env.open(temp)) {
            h.write(SegmentHeader.encode(startLsn), 0);
            h.sync();
        }
        env.rename(temp, target);
        env.syncDirectory(dir);
        return new Segment(target, startLsn);
    }
}
