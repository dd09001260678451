package io.betree.internal.storage;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.betree.internal.fault.BetreeException;
import java.io.Closeable;
import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedByInterruptException;
import java.nio.channels.ClosedChannelException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The file-system seam over real files. */
class DefaultStorageEnvTest {

    private final StorageEnv env = StorageEnv.defaultEnv();

    @TempDir
    Path dir;

    @Test
    void positionalReadsAndWrites() throws IOException {
        Path path = dir.resolve("f");
        FileHandle f = env.open(path);
        {
            assertEquals(path, f.path());
            assertEquals(0, f.size());
            ByteBuffer src = ByteBuffer.wrap(new byte[] {1, 2, 3, 4});
            f.write(src, 10);
            assertFalse(src.hasRemaining());
            assertEquals(14, f.size());
            ByteBuffer dst = ByteBuffer.allocate(6);
            f.readFully(dst, 8);
            assertArrayEquals(new byte[] {0, 0, 1, 2, 3, 4}, dst.array());
            ByteBuffer tooLong = ByteBuffer.allocate(10);
            assertThrows(EOFException.class, () -> f.readFully(tooLong, 8));
            assertEquals(6, tooLong.position());
            f.sync();
            f.truncate(12);
            assertEquals(12, f.size());
            f.truncate(100);
            assertEquals(12, f.size(), "truncate never grows");
            f.close();
            f.close();
            assertThrows(ClosedChannelException.class, () -> f.readFully(ByteBuffer.allocate(1), 0));
        }
    }

    @Test
    void directoryOperations() throws IOException {
        Path sub = dir.resolve("a/b");
        env.createDirectories(sub);
        env.createDirectories(sub);
        assertTrue(env.exists(sub));
        for (String name : new String[] {"z", "m", "a"}) {
            env.open(sub.resolve(name)).close();
        }
        assertEquals(List.of(sub.resolve("a"), sub.resolve("m"), sub.resolve("z")), env.list(sub));
        env.rename(sub.resolve("z"), sub.resolve("a"));
        assertEquals(List.of(sub.resolve("a"), sub.resolve("m")), env.list(sub));
        env.delete(sub.resolve("m"));
        env.delete(sub.resolve("m"));
        assertFalse(env.exists(sub.resolve("m")));
        env.syncDirectory(sub);
    }

    @Test
    void aSecondLockInTheSameJvmFailsClearly() throws IOException {
        Path lockFile = dir.resolve("LOCK");
        Closeable lock = env.lock(lockFile);
        BetreeException e = assertThrows(BetreeException.class, () -> env.lock(lockFile));
        assertTrue(e.getMessage().startsWith("already open by another process/environment: " + dir), e.getMessage());
        assertThrows(BetreeException.class, () -> env.lock(dir.resolve("./LOCK")));
        Path link = dir.resolve("link");
        Files.createSymbolicLink(link, dir);
        assertThrows(BetreeException.class, () -> env.lock(link.resolve("LOCK")));
        lock.close();
        lock.close();
        env.lock(lockFile).close();
    }

    @Test
    void anInterruptedReaderDoesNotBreakTheHandleForOthers() throws Exception {
        Path path = dir.resolve("f");
        try (FileHandle f = env.open(path)) {
            f.write(ByteBuffer.wrap(new byte[4096]), 0);
            AtomicReference<Throwable> seen = new AtomicReference<>();
            Thread t = new Thread(() -> {
                Thread.currentThread().interrupt();
                try {
                    f.readFully(ByteBuffer.allocate(10), 0);
                } catch (Throwable e) {
                    seen.set(e);
                }
            });
            t.start();
            t.join();
            assertTrue(seen.get() instanceof ClosedByInterruptException, String.valueOf(seen.get()));
            ByteBuffer dst = ByteBuffer.allocate(4096);
            f.readFully(dst, 0);
            f.write(ByteBuffer.wrap(new byte[] {7}), 5000);
            assertEquals(5001, f.size());
        }
    }
}
