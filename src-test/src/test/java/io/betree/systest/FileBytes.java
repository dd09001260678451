package io.betree.systest;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Path;

/** Reads and damages bytes of a file in place, for the corruption tests. */
final class FileBytes {
    private FileBytes() {
    }

    /** The {@code length} bytes at {@code position}. */
    static byte[] readAt(Path file, long position, int length) throws IOException {
        try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "r")) {
            byte[] b = new byte[length];
            raf.seek(position);
            raf.readFully(b);
            return b;
        }
    }

    /** Writes {@code bytes} at {@code position}, extending the file if needed. */
    static void overwrite(Path file, long position, byte[] bytes) throws IOException {
        try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "rw")) {
            raf.seek(position);
            raf.write(bytes);
        }
    }

    /** Inverts bit {@code bit} (0-7) of the byte at {@code position}. */
    static void flipBit(Path file, long position, int bit) throws IOException {
        byte[] b = readAt(file, position, 1);
        b[0] ^= (byte) (1 << bit);
        overwrite(file, position, b);
    }

    /** Cuts or extends the file to {@code size} bytes. */
    static void truncate(Path file, long size) throws IOException {
        try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "rw")) {
            raf.setLength(size);
        }
    }
}
