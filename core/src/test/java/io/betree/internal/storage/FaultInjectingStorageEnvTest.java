package io.betree.internal.storage;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The test utility itself: faults fire when asked, and crashes restore exactly the synced state. */
class FaultInjectingStorageEnvTest {

    @TempDir
    Path dir;

    private final FaultInjectingStorageEnv env = new FaultInjectingStorageEnv();

    private static ByteBuffer bytes(int... values) {
        byte[] b = new byte[values.length];
        for (int i = 0; i < values.length; i++) {
            b[i] = (byte) values[i];
        }
        return ByteBuffer.wrap(b);
    }

    /** A file that exists durably with content {1, 2, 3, 4}. */
    private Path durableFile() throws IOException {
        Path path = dir.resolve("f");
        try (FileHandle f = env.open(path)) {
            f.write(bytes(1, 2, 3, 4), 0);
            f.sync();
        }
        env.syncDirectory(dir);
        return path;
    }

    @Test
    void crashRestoresTheLastSyncedContent() throws IOException {
        Path path = durableFile();
        FileHandle f = env.open(path);
        f.write(bytes(9, 9), 1);
        f.write(bytes(8, 8, 8), 6);
        f.truncate(5);
        f.write(bytes(7), 0);
        assertTrue(env.hasUnsyncedChanges(path));
        env.crash();
        assertArrayEquals(new byte[] {1, 2, 3, 4}, Files.readAllBytes(path));
        IOException dead = assertThrows(IOException.class, () -> f.write(bytes(1), 0));
        assertTrue(dead.getMessage().contains("simulated crash"));
        f.close();
    }

    @Test
    void syncedChangesSurvive() throws IOException {
        Path path = durableFile();
        try (FileHandle f = env.open(path)) {
            f.write(bytes(5, 6), 4);
            f.sync();
            f.truncate(3);
        }
        env.crash();
        assertArrayEquals(new byte[] {1, 2, 3, 4, 5, 6}, Files.readAllBytes(path));
    }

    @Test
    void unsyncedDirectoryChangesAreUndone() throws IOException {
        Path kept = durableFile();
        Path created = dir.resolve("new");
        try (FileHandle f = env.open(created)) {
            f.write(bytes(1), 0);
            f.sync();
        }
        Path moved = dir.resolve("moved");
        env.rename(kept, moved);
        env.crash();
        assertFalse(Files.exists(created));
        assertFalse(Files.exists(moved));
        assertArrayEquals(new byte[] {1, 2, 3, 4}, Files.readAllBytes(kept));

        env.delete(kept);
        assertFalse(Files.exists(kept));
        env.crash();
        assertArrayEquals(new byte[] {1, 2, 3, 4}, Files.readAllBytes(kept));

        env.delete(kept);
        env.syncDirectory(dir);
        env.crash();
        assertFalse(Files.exists(kept));
    }

    @Test
    void aRenameOverAnExistingFileIsUndoneWhole() throws IOException {
        Path target = durableFile();
        Path source = dir.resolve("tmp");
        try (FileHandle f = env.open(source)) {
            f.write(bytes(5, 5), 0);
            f.sync();
        }
        env.rename(source, target);
        assertArrayEquals(new byte[] {5, 5}, Files.readAllBytes(target));
        env.crash();
        assertArrayEquals(new byte[] {1, 2, 3, 4}, Files.readAllBytes(target));
        assertFalse(Files.exists(source));
    }

    @Test
    void writeFaultsFireOnTheRightWrite() throws IOException {
        Path path = durableFile();
        try (FileHandle f = env.open(path)) {
            env.failWrite(2);
            f.write(bytes(1), 0);
            IOException e = assertThrows(IOException.class, () -> f.write(bytes(2), 0));
            assertTrue(e.getMessage().startsWith("simulated write failure"));
            f.write(bytes(3), 0);

            env.tearWrite(1, 2);
            ByteBuffer src = bytes(7, 7, 7, 7);
            assertThrows(IOException.class, () -> f.write(src, 0));
            assertEquals(2, src.position());
            ByteBuffer back = ByteBuffer.allocate(4);
            f.readFully(back, 0);
            assertArrayEquals(new byte[] {7, 7, 3, 4}, back.array());

            env.failWritesAfter(1);
            f.write(bytes(1), 0);
            assertThrows(IOException.class, () -> f.write(bytes(1), 0));
            assertThrows(IOException.class, () -> f.write(bytes(1), 0));
            env.clearFaults();
            f.write(bytes(1), 0);
            assertEquals(9, env.writeCount());
        }
    }

    @Test
    void faultsCanBeLimitedToSomeFiles() throws IOException {
        Path path = durableFile();
        Path other = dir.resolve("other");
        env.onlyFiles(path::equals).failWritesAfter(0);
        try (FileHandle f = env.open(other)) {
            f.write(bytes(1), 0);
        }
        try (FileHandle f = env.open(path)) {
            assertThrows(IOException.class, () -> f.write(bytes(1), 0));
        }
    }

    @Test
    void diskFullWritesWhatFits() throws IOException {
        Path path = durableFile();
        try (FileHandle f = env.open(path)) {
            env.setSpaceBudget(3);
            f.write(bytes(1, 1), 0);
            ByteBuffer src = bytes(2, 2, 2, 2, 2);
            IOException e = assertThrows(IOException.class, () -> f.write(src, 4));
            assertEquals("No space left on device", e.getMessage());
            assertEquals(7, f.size());
            f.truncate(5);
            f.write(bytes(3, 3), 5);
            assertThrows(IOException.class, () -> f.write(bytes(4), 7));
        }
    }

    @Test
    void syncAndReadFaults() throws IOException {
        Path path = durableFile();
        try (FileHandle f = env.open(path)) {
            f.write(bytes(9), 0);
            env.failSync(1);
            assertThrows(IOException.class, f::sync);
            assertTrue(env.hasUnsyncedChanges(path), "a failed sync makes nothing durable");
            f.sync();
            env.failAllSyncs(true);
            assertThrows(IOException.class, f::sync);
            assertThrows(IOException.class, f::sync);
            env.failAllSyncs(false);
            env.failReads(true);
            assertThrows(IOException.class, () -> f.readFully(ByteBuffer.allocate(1), 0));
        }
    }

    @Test
    void randomCrashesKeepSomeUnsyncedWrites() throws IOException {
        Path path = durableFile();
        Set<String> outcomes = new HashSet<>();
        for (int seed = 0; seed < 40; seed++) {
            try (FileHandle f = env.open(path)) {
                f.write(ByteBuffer.wrap(new byte[2048]), 0);
            }
            env.crash(new Random(seed));
            byte[] after = Files.readAllBytes(path);
            outcomes.add(after.length + ":" + after[0] + ":" + after[after.length - 1]);
            try (FileHandle f = env.open(path)) {
                f.truncate(0);
                f.write(bytes(1, 2, 3, 4), 0);
                f.sync();
            }
        }
        assertTrue(outcomes.contains("4:1:4"), "write lost: " + outcomes);
        assertTrue(outcomes.contains("2048:0:0"), "write kept: " + outcomes);
        assertTrue(outcomes.size() >= 3, "torn writes: " + outcomes);
    }

    @Test
    void locksDieWithACrash() throws IOException {
        Path lockFile = dir.resolve("LOCK");
        env.lock(lockFile);
        assertThrows(io.betree.internal.fault.BetreeException.class, () -> env.lock(lockFile));
        env.crash();
        env.lock(lockFile).close();
    }
}
