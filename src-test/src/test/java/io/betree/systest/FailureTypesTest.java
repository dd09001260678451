package io.betree.systest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.betree.BetreeException;
import io.betree.BetreeIOException;
import io.betree.CorruptionException;
import io.betree.DirectoryInUseException;
import io.betree.Environment;
import io.betree.EnvironmentFailedException;
import io.betree.EnvironmentOptions;
import io.betree.Index;
import io.betree.StorageSeam;
import io.betree.internal.storage.FaultInjectingStorageEnv;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Each kind of failure reaches the user as its own public exception type, and nothing in what the
 * user catches (the exception, its causes, its suppressed exceptions) is an internal type.
 */
class FailureTypesTest {
    @TempDir
    Path work;

    @Test
    void aDirectoryOpenElsewhereIsRefusedWithItsOwnType() {
        Path dir = work.resolve("busy");
        try (Environment first = Environment.open(dir)) {
            DirectoryInUseException e = assertThrows(DirectoryInUseException.class, () -> Environment.open(dir));
            assertTrue(e.getMessage().contains("already open") && e.getMessage().contains(dir.toString()),
                    e.getMessage());
            assertPublicThroughout(e);
            first.openIndex("i").put(new byte[] {1}, new byte[] {1});
        }
    }

    @Test
    void workAfterAFailedLogSyncIsRefusedWithItsOwnTypeNamingTheCause() {
        FaultInjectingStorageEnv fi = new FaultInjectingStorageEnv();
        Path dir = work.resolve("failed");
        EnvironmentOptions options = StorageSeam.withStorage(
                EnvironmentOptions.defaults().checkpointInterval(Duration.ZERO), fi);
        try (Environment env = Environment.open(dir, options)) {
            Index index = env.openIndex("i");
            index.put(new byte[] {1}, new byte[] {1});
            fi.onlyFiles(p -> p.getFileName().toString().startsWith("wal-"));
            fi.failSync(1);
            BetreeIOException syncFailure = assertThrows(BetreeIOException.class,
                    () -> index.put(new byte[] {2}, new byte[] {2}));
            assertInstanceOf(IOException.class, syncFailure.getCause(), "the I/O failure is the cause");
            assertPublicThroughout(syncFailure);
            fi.clearFaults();
            EnvironmentFailedException refused = assertThrows(EnvironmentFailedException.class,
                    () -> index.get(new byte[] {1}));
            assertTrue(refused.getMessage().contains("reopen"), refused.getMessage());
            assertInstanceOf(BetreeIOException.class, refused.getCause(), "the earlier failure is the cause");
            assertPublicThroughout(refused);
            assertThrows(EnvironmentFailedException.class, env::begin);
            assertThrows(EnvironmentFailedException.class, () -> env.openIndex("j"));
        }
        try (Environment env = Environment.open(dir)) {
            assertNotNull(env.openIndex("i").get(new byte[] {1}), "the reopened environment recovered");
        }
    }

    @Test
    void damageIsReportedWithTheFileAndTheProblem() throws IOException {
        Path dir = work.resolve("foreign");
        Files.createDirectories(dir);
        Files.write(dir.resolve("betree.data"), new byte[8192]);
        CorruptionException e = assertThrows(CorruptionException.class, () -> Environment.open(dir));
        assertEquals(dir.resolve("betree.data").toAbsolutePath(), e.file().toAbsolutePath());
        assertEquals(-1, e.blockNumber());
        assertPublicThroughout(e);
    }

    /** Neither the exception nor any cause or suppressed exception is of an internal type. */
    private static void assertPublicThroughout(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause()) {
            assertTrue(!c.getClass().getName().startsWith("io.betree.internal."),
                    "an internal type reached the user: " + c.getClass().getName() + " in " + t);
            for (Throwable s : c.getSuppressed()) {
                assertPublicThroughout(s);
            }
            if (c instanceof BetreeException && c.getStackTrace().length == 0) {
                throw new AssertionError("no stack trace on " + c);
            }
        }
    }
}
