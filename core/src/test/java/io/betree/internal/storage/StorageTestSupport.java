package io.betree.internal.storage;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Random;

/** Helpers shared by the storage tests: payloads, whole-block reads and file damage. */
final class StorageTestSupport {

    private StorageTestSupport() {
    }

    /**
     * A payload of {@code size} bytes derived from {@code seed}; compressible payloads repeat a short
     * random vocabulary, incompressible ones are random bytes.
     */
    static byte[] payload(long seed, int size, boolean compressible) {
        Random random = new Random(seed);
        byte[] data = new byte[size];
        if (!compressible) {
            random.nextBytes(data);
            return data;
        }
        byte[] words = new byte[64];
        random.nextBytes(words);
        for (int i = 0; i < size; i++) {
            data[i] = (i % 7 == 0) ? (byte) random.nextInt(4) : words[(i * 31 + i / 5) % words.length];
        }
        return data;
    }

    /** Reads block {@code blockNumber} into a fresh heap array. */
    static byte[] read(BlockFile file, long blockNumber) throws IOException {
        ByteBuffer buf = file.read(blockNumber, ByteBuffer::allocate);
        byte[] out = new byte[buf.remaining()];
        buf.get(out);
        return out;
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

    /** Overwrites {@code path} at {@code offset} with {@code bytes}. */
    static void overwrite(Path path, long offset, byte[] bytes) throws IOException {
        try (FileChannel ch = FileChannel.open(path, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            ch.write(ByteBuffer.wrap(bytes), offset);
        }
    }
}
