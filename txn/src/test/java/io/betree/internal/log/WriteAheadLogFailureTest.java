package io.betree.internal.log;

import static io.betree.internal.log.LogTestSupport.LARGE_SEGMENTS;
import static io.betree.internal.log.LogTestSupport.append;
import static io.betree.internal.log.LogTestSupport.payload;
import static io.betree.internal.log.LogTestSupport.readAll;
import static io.betree.internal.log.LogTestSupport.replay;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.betree.internal.fault.BetreeIOException;
import io.betree.internal.log.LogTestSupport.Rec;
import io.betree.internal.storage.FaultInjectingStorageEnv;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Write and sync failures: the caller sees them, and the log refuses to go on. */
class WriteAheadLogFailureTest {

    @TempDir
    Path dir;

    private final FaultInjectingStorageEnv env = new FaultInjectingStorageEnv(CountingStorageEnv.withoutSyncs());

    @Test
    void aFailedSyncRefusesLaterAppendsAndSyncs() throws IOException {
        WriteAheadLog log = WriteAheadLog.open(env, dir, LARGE_SEGMENTS);
        replay(log, 0);
        Rec first = append(log, payload(1, 50));
        log.syncTo(first.end());
        Rec second = append(log, payload(2, 50));
        env.failSync(1);
        IOException failed = assertThrows(IOException.class, () -> log.syncTo(second.end()));
        assertTrue(failed.getMessage().contains("simulated sync failure"), failed.getMessage());

        BetreeIOException refused = assertThrows(BetreeIOException.class, () -> append(log, payload(3, 5)));
        assertTrue(refused.getMessage().contains("reopen"), refused.getMessage());
        assertTrue(refused.getMessage().contains("simulated sync failure"), "names the first failure");
        assertInstanceOf(IOException.class, refused.getCause());
        assertThrows(BetreeIOException.class, () -> log.syncTo(second.end()), "no second fsync attempt");
        log.syncTo(first.end());
        long syncs = env.syncCount();
        log.close();
        assertEquals(syncs, env.syncCount(), "close does not retry the failed sync");

        env.crash();
        assertEquals(List.of(first), readAll(env, dir, LARGE_SEGMENTS));
    }

    @Test
    void aFullDiskFailsTheAppendAndRecordsBeforeItSurvive() throws IOException {
        List<Rec> written = new ArrayList<>();
        WriteAheadLog log = WriteAheadLog.open(env, dir, LARGE_SEGMENTS);
        replay(log, 0);
        for (int i = 0; i < 3; i++) {
            written.add(append(log, payload(i, 80)));
        }
        env.setSpaceBudget(100);
        IOException full = assertThrows(IOException.class, () -> append(log, payload(9, 500)));
        assertTrue(full.getMessage().contains("No space left on device"), full.getMessage());
        env.clearFaults();
        BetreeIOException refused = assertThrows(BetreeIOException.class, () -> append(log, payload(10, 5)));
        assertTrue(refused.getMessage().contains("No space left on device"), refused.getMessage());
        log.syncTo(written.get(2).end());
        log.close();

        env.crash();
        assertEquals(written, readAll(env, dir, LARGE_SEGMENTS), "the partial record is discarded");
    }

    @Test
    void aFailureWhileRollingLosesNothing() throws IOException {
        List<Rec> written = new ArrayList<>();
        WriteAheadLog log = WriteAheadLog.open(env, dir, 1024);
        replay(log, 0);
        env.onlyFiles(p -> p.getFileName().toString().endsWith(".creating"));
        env.failWrite(2);
        IOException failed = null;
        for (int i = 0; i < 100 && failed == null; i++) {
            try {
                written.add(append(log, payload(i, 200)));
            } catch (IOException e) {
                failed = e;
            }
        }
        assertTrue(failed != null && failed.getMessage().contains("new log segment"), String.valueOf(failed));
        assertThrows(BetreeIOException.class, () -> append(log, payload(0, 1)));
        assertEquals(written.get(written.size() - 1).end(), log.durableLsn(), "rolling synced the full segment");
        log.close();
        env.crash();
        assertEquals(written, readAll(env, dir, 1024));
        try (Stream<Path> files = Files.list(dir)) {
            assertTrue(files.noneMatch(p -> p.toString().endsWith(".creating")), "leftovers are removed");
        }
    }
}
