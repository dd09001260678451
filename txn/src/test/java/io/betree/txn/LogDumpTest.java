package io.betree.txn;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.betree.internal.log.CommitRecord;
import io.betree.internal.log.CreateIndexRecord;
import io.betree.internal.log.WriteAheadLog;
import io.betree.internal.storage.StorageEnv;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class LogDumpTest {

    @TempDir
    Path dir;

    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();

    private int dump(String... args) {
        return LogDump.run(args, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
    }

    private String output() {
        return out.toString(StandardCharsets.UTF_8);
    }

    private long writeLog() throws IOException {
        try (WriteAheadLog log = WriteAheadLog.open(StorageEnv.defaultEnv(), dir, 1 << 20)) {
            log.replay(0, (lsn, type, payload) -> { });
            log.append(new CreateIndexRecord(1, "orders", "ZSTD", 3, 4 << 20, 64 << 10, 16));
            return log.append(new CommitRecord(5, List.of(CommitRecord.Op.put(1, new byte[] {1, 2}, new byte[] {3}),
                    CommitRecord.Op.delete(1, new byte[] {9}))));
        }
    }

    private Path segment() throws IOException {
        try (Stream<Path> s = Files.list(dir)) {
            return s.filter(p -> p.getFileName().toString().startsWith("wal-")).findFirst().orElseThrow();
        }
    }

    @Test
    void printsEveryRecordWithItsDescription() throws IOException {
        long end = writeLog();
        assertEquals(0, dump(dir.toString()), err.toString(StandardCharsets.UTF_8));
        String[] lines = output().split("\\R");
        assertEquals(3, lines.length, output());
        assertTrue(lines[0].matches(" +0  CREATE_INDEX  index=1 name=\"orders\" codec=ZSTD.*"), lines[0]);
        assertTrue(lines[1].contains("COMMIT") && lines[1].contains("ts=5 ops=2 [put index=1 key=0x0102 value=0x03; "
                + "delete index=1 key=0x09]"), lines[1]);
        assertEquals("# 1 COMMIT, 1 CREATE_INDEX, 2 records shown; log spans LSNs [0, " + end + ")", lines[2]);
    }

    @Test
    void reportsATornTailWithoutRemovingIt() throws IOException {
        writeLog();
        Path segment = segment();
        try (FileChannel ch = FileChannel.open(segment, StandardOpenOption.WRITE, StandardOpenOption.APPEND)) {
            ch.write(ByteBuffer.wrap(new byte[] {0, 0, 0, 50, 1, 2, 3}));
        }
        long size = Files.size(segment);
        assertEquals(0, dump(dir.toString()));
        assertTrue(output().contains("# torn tail: 7 bytes"), output());
        assertEquals(size, Files.size(segment), "the dump modifies nothing");
    }

    @Test
    void reportsDamageAndUsageErrors() throws IOException {
        writeLog();
        Path segment = segment();
        try (FileChannel ch = FileChannel.open(segment, StandardOpenOption.WRITE)) {
            ch.write(ByteBuffer.wrap(new byte[] {'X'}), 0);
        }
        assertEquals(1, dump(dir.toString()));
        assertTrue(err.toString(StandardCharsets.UTF_8).contains("bad magic"), err.toString(StandardCharsets.UTF_8));
        assertEquals(2, dump());
        assertEquals(2, dump(dir.toString(), "not-a-number"));
        assertEquals(2, dump(dir.resolve("missing").toString()));
    }
}
