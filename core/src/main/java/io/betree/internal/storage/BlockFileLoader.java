package io.betree.internal.storage;

import io.betree.internal.fault.BetreeException;
import io.betree.internal.fault.CorruptionException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;

/**
 * Creates new block files and opens existing ones: on open it picks the header slot to trust, loads
 * and checks its translation table, rebuilds the free-space map and trims bytes no checkpoint
 * references.
 *
 * <p>The valid slot with the highest sequence wins. The other slot is only a fallback for when the
 * newer one is torn or damaged (a crash while it was being written); if the newer header is intact
 * but its table is not, that is reported as corruption rather than silently rolled back, because the
 * older checkpoint's space may have been reused since the newer one became durable.
 */
final class BlockFileLoader {

    /** Creates the {@link BlockFile} from what was loaded. */
    @FunctionalInterface
    interface Factory {
        /** Builds the block file for the checkpoint of {@code header}, found in {@code slot}. */
        BlockFile create(FileHeader header, int slot, TableSnapshot.Loaded loaded, ExtentAllocator allocator);
    }

    private static final int TABLE_SCRATCH_SIZE = 1 << 20;

    private BlockFileLoader() {
    }

    /** Builds a new file holding an empty checkpoint (sequence 1, header slot 0) and renames it into place. */
    static void create(StorageEnv env, Path path) throws IOException {
        Path absolute = path.toAbsolutePath();
        Path tmp = absolute.resolveSibling(absolute.getFileName() + BlockFile.CREATING_SUFFIX);
        env.delete(tmp);
        try (FileHandle handle = env.open(tmp)) {
            TableSnapshot empty = TableSnapshot.empty();
            int crc = empty.writeTo(handle, BlockFormat.DATA_START, 1, null, ByteBuffer.allocate(4096));
            long tableLength = empty.encodedLength(-1);
            FileHeader header = new FileHeader(1, BlockFormat.DATA_START, tableLength, crc, 0, -1, 0, 0,
                    BlockFormat.DATA_START + BlockFormat.alignUp(tableLength));
            handle.write(header.encode(), 0);
            handle.sync();
        }
        env.rename(tmp, absolute);
        env.syncDirectory(absolute.getParent());
    }

    /**
     * Loads the file open in {@code file}.
     *
     * @throws CorruptionException if it is not a block file or no usable checkpoint is found
     * @throws BetreeException if it was written by another format version
     * @throws IOException if reading or trimming fails
     */
    static BlockFile load(Path path, FileHandle file, Factory factory) throws IOException {
        long size = file.size();
        if (size == 0) {
            throw new CorruptionException(path, "empty file, not a betree block file");
        }
        int headerBytes = (int) Math.min(size, BlockFormat.DATA_START);
        ByteBuffer slots = ByteBuffer.allocate(headerBytes);
        file.readFully(slots, 0);
        FileHeader.Parsed[] parsed = new FileHeader.Parsed[2];
        for (int i = 0; i < 2; i++) {
            int from = i * BlockFormat.HEADER_SLOT_SIZE;
            int length = Math.max(0, Math.min(BlockFormat.HEADER_SLOT_SIZE, headerBytes - from));
            parsed[i] = FileHeader.parse(length == 0 ? ByteBuffer.allocate(0) : slots.slice(from, length));
        }
        for (FileHeader.Parsed p : parsed) {
            if (p.status() == FileHeader.Status.NEWER_VERSION) {
                throw new BetreeException(path + " was written by a newer version of betree (block file format "
                        + p.version() + "; this version reads format " + FileHeader.FORMAT_VERSION
                        + "); upgrade betree to open it");
            }
            if (p.status() == FileHeader.Status.OLDER_VERSION) {
                throw new BetreeException(path + " was written by an older version of betree (block file format "
                        + p.version() + "; this version reads formats " + FileHeader.OLDEST_READABLE_VERSION
                        + " to " + FileHeader.FORMAT_VERSION + "; older formats store nodes differently); open it"
                        + " with the betree release that wrote it and copy its data out");
            }
        }
        int slot = -1;
        for (int i = 0; i < 2; i++) {
            if (parsed[i].status() == FileHeader.Status.VALID
                    && (slot < 0 || parsed[i].header().sequence() > parsed[slot].header().sequence())) {
                slot = i;
            }
        }
        if (slot < 0) {
            if (parsed[0].status() == FileHeader.Status.BAD_MAGIC
                    && parsed[1].status() == FileHeader.Status.BAD_MAGIC) {
                throw new CorruptionException(path, "not a betree block file (bad magic)");
            }
            throw new CorruptionException(path, "no valid header: slot 0: " + parsed[0].problem()
                    + "; slot 1: " + parsed[1].problem());
        }
        FileHeader header = parsed[slot].header();
        TableSnapshot.Loaded loaded;
        ExtentAllocator allocator;
        ByteBuffer scratch = ScratchBuffers.take(TABLE_SCRATCH_SIZE);
        try {
            loaded = TableSnapshot.readFrom(file, header, size, scratch);
            allocator = ExtentAllocator.rebuild(loaded.table(), header.tableOffset(), header.tableLength());
        } catch (InvalidDataException e) {
            throw new CorruptionException(path, "checkpoint " + header.sequence() + " (header slot " + slot
                    + ", translation table at offset " + header.tableOffset() + "): " + e.getMessage());
        } finally {
            ScratchBuffers.giveBack(scratch);
        }
        if (size > allocator.end()) {
            file.truncate(allocator.end());
        }
        return factory.create(header, slot, loaded, allocator);
    }
}
