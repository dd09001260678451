package io.betree.internal.storage;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;

/**
 * The crash-simulation state of one file for {@link FaultInjectingStorageEnv}: an undo log of every
 * change made since the file's last successful sync. Undoing the log in reverse order restores the
 * file to exactly its last-synced content; replaying a random subset afterwards models the writes the
 * operating system happened to flush before the crash.
 */
final class FileShadow {

    /** One unsynced change: a write of {@code data} at {@code position}, or a truncation to it. */
    private record Change(boolean truncate, long position, byte[] data, byte[] old, long sizeBefore) {
    }

    private final List<Change> log = new ArrayList<>();
    /** Set once the file was deleted or replaced; a detached shadow is never restored. */
    private boolean detached;

    /** Records that {@code data} was written at {@code position}, replacing {@code old}. */
    void recordWrite(long position, byte[] data, byte[] old, long sizeBefore) {
        log.add(new Change(false, position, data, old, sizeBefore));
    }

    /** Records that the file shrank to {@code size}, dropping {@code removed}. */
    void recordTruncate(long size, byte[] removed, long sizeBefore) {
        log.add(new Change(true, size, null, removed, sizeBefore));
    }

    /** The file was synced: everything logged is durable. */
    void synced() {
        log.clear();
    }

    /** Whether anything changed since the last sync. */
    boolean hasUnsyncedChanges() {
        return !log.isEmpty();
    }

    void detach() {
        detached = true;
    }

    boolean detached() {
        return detached;
    }

    /**
     * Rewrites the file through {@code file} to its last-synced content; then, if {@code random} is not
     * null, re-applies each logged change with probability 1/3 whole and 1/3 as a prefix cut at a
     * 512-byte boundary (a torn write). Clears the log.
     */
    void restore(FileHandle file, Random random) throws IOException {
        for (int i = log.size() - 1; i >= 0; i--) {
            Change c = log.get(i);
            if (c.old().length > 0) {
                file.write(ByteBuffer.wrap(c.old()), c.position());
            }
            file.truncate(c.sizeBefore());
        }
        if (random != null) {
            for (Change c : log) {
                int choice = random.nextInt(3);
                if (choice == 0) {
                    continue;
                }
                if (c.truncate()) {
                    file.truncate(c.position());
                } else {
                    int keep = choice == 1 ? c.data().length : tornLength(c.data().length, random);
                    file.write(ByteBuffer.wrap(c.data(), 0, keep), c.position());
                }
            }
        }
        log.clear();
    }

    private static int tornLength(int length, Random random) {
        int sectors = length / 512;
        return sectors == 0 ? 0 : 512 * random.nextInt(sectors);
    }

    /** The last-synced content, computed from the file's {@code current} content without touching it. */
    byte[] syncedImage(byte[] current) {
        byte[] image = current;
        for (int i = log.size() - 1; i >= 0; i--) {
            Change c = log.get(i);
            // Right after the change, undoing it means: back to the old size, old bytes in place.
            image = Arrays.copyOf(image, (int) c.sizeBefore());
            if (c.old().length > 0) {
                System.arraycopy(c.old(), 0, image, (int) c.position(), c.old().length);
            }
        }
        return image;
    }
}
