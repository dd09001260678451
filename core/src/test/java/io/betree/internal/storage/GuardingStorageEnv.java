package io.betree.internal.storage;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * A {@link StorageEnv} wrapper for tests that checks the copy-on-write promise on every single write:
 * no write may touch space that a checkpoint a crash could fall back to references. Protected are the
 * header slot, the translation table region and every block extent (rounded up to the alignment) of
 *
 * <ul>
 *   <li>the checkpoint that opening the file would pick from its content at the last successful
 *       sync of the handle (or when it was opened), and
 *   <li>every checkpoint whose header was written through the handle since then (it may already be
 *       on disk: a crash can pick it).
 * </ul>
 *
 * The protected set is derived from the bytes of the file, independently of {@link BlockFile}'s own
 * bookkeeping. A write that overlaps it is recorded in {@link #violations()} and fails with an
 * {@link AssertionError}. Writes, syncs and the re-derivation are serialized per handle.
 */
final class GuardingStorageEnv extends ForwardingStorageEnv {

    private final List<String> violations = Collections.synchronizedList(new ArrayList<>());
    private long checkedWrites;

    GuardingStorageEnv(StorageEnv delegate) {
        super(delegate);
    }

    /** Descriptions of the writes that touched protected space. */
    List<String> violations() {
        synchronized (violations) {
            return new ArrayList<>(violations);
        }
    }

    /** Writes checked while some space was protected. */
    synchronized long checkedWrites() {
        return checkedWrites;
    }

    private synchronized void countCheckedWrite() {
        checkedWrites++;
    }

    @Override
    public FileHandle open(Path path) throws IOException {
        FileHandle file = delegate.open(path);
        try {
            return new Guarded(file);
        } catch (IOException | RuntimeException e) {
            file.close();
            throw e;
        }
    }

    /** The extents [start, end) of one checkpoint: header slot, table region and blocks. */
    private record Protected(long sequence, List<long[]> extents) {
    }

    private final class Guarded implements FileHandle {
        private final FileHandle file;
        /** The checkpoint open would pick as of the last sync, or null. */
        private Protected durable;
        /** Checkpoints whose headers were written since the last sync. */
        private final List<Protected> unsynced = new ArrayList<>();

        Guarded(FileHandle file) throws IOException {
            this.file = file;
            this.durable = durableCheckpoint();
        }

        @Override
        public Path path() {
            return file.path();
        }

        @Override
        public void readFully(ByteBuffer dst, long position) throws IOException {
            file.readFully(dst, position);
        }

        @Override
        public synchronized void write(ByteBuffer src, long position) throws IOException {
            long end = position + src.remaining();
            check(durable, position, end);
            for (Protected p : unsynced) {
                check(p, position, end);
            }
            if (durable != null || !unsynced.isEmpty()) {
                countCheckedWrite();
            }
            file.write(src, position);
            if (position < BlockFormat.DATA_START) {
                int slot = (int) (position / BlockFormat.HEADER_SLOT_SIZE);
                Protected written = checkpointInSlot(slot, file.size());
                if (written != null) {
                    unsynced.add(written);
                }
            }
        }

        private void check(Protected p, long start, long end) {
            if (p == null) {
                return;
            }
            for (long[] e : p.extents()) {
                if (start < e[1] && e[0] < end) {
                    String message = "write of [" + start + ", " + end + ") to " + path() + " overlaps ["
                            + e[0] + ", " + e[1] + ") of checkpoint " + p.sequence();
                    violations.add(message);
                    throw new AssertionError(message);
                }
            }
        }

        @Override
        public synchronized void sync() throws IOException {
            file.sync();
            durable = durableCheckpoint();
            unsynced.clear();
        }

        @Override
        public long size() throws IOException {
            return file.size();
        }

        @Override
        public void truncate(long size) throws IOException {
            file.truncate(size);
        }

        @Override
        public void close() throws IOException {
            file.close();
        }

        /** The checkpoint opening the file now would pick, or null if there is none. */
        private Protected durableCheckpoint() throws IOException {
            long size = file.size();
            Protected best = null;
            for (int slot = 0; slot < 2; slot++) {
                Protected p = checkpointInSlot(slot, size);
                if (p != null && (best == null || p.sequence() > best.sequence())) {
                    best = p;
                }
            }
            return best;
        }

        /** The checkpoint of header slot {@code slot}, or null if the slot is not valid. */
        private Protected checkpointInSlot(int slot, long size) throws IOException {
            long from = (long) slot * BlockFormat.HEADER_SLOT_SIZE;
            if (size < from + FileHeader.SIZE) {
                return null;
            }
            ByteBuffer buf = ByteBuffer.allocate(FileHeader.SIZE);
            file.readFully(buf, from);
            FileHeader.Parsed parsed = FileHeader.parse(buf.flip());
            if (parsed.status() != FileHeader.Status.VALID) {
                return null;
            }
            FileHeader header = parsed.header();
            List<long[]> extents = new ArrayList<>();
            extents.add(new long[] {from, from + BlockFormat.HEADER_SLOT_SIZE});
            extents.add(new long[] {header.tableOffset(),
                header.tableOffset() + BlockFormat.alignUp(header.tableLength())});
            try {
                TableSnapshot table = TableSnapshot.readFrom(file, header, size, ByteBuffer.allocate(1 << 16)).table();
                for (int b = 0; b < table.size(); b++) {
                    long offset = table.offsets()[b];
                    if (offset != TranslationTable.FREE && offset != TranslationTable.UNWRITTEN) {
                        extents.add(new long[] {offset, offset + BlockFormat.alignUp(table.lengths()[b])});
                    }
                }
            } catch (InvalidDataException e) {
                return null; // a damaged table: open refuses it, so there is nothing to fall back to
            }
            return new Protected(header.sequence(), extents);
        }
    }
}
