package io.betree.systest;

import static io.betree.systest.FileBytes.flipBit;
import static io.betree.systest.FileBytes.overwrite;
import static io.betree.systest.FileBytes.readAt;
import static io.betree.systest.FileBytes.truncate;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.betree.BetreeException;
import io.betree.BetreeIOException;
import io.betree.CorruptionException;
import io.betree.Durability;
import io.betree.Environment;
import io.betree.EnvironmentOptions;
import io.netty.util.ResourceLeakDetector;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Damages the data file of a populated environment in many ways, each in its own copy of the
 * directory, then reopens it and reads everything (every index's name list, a get of every key and
 * a full scan). The only acceptable outcomes are exactly the original data (when the damage hit
 * free space, padding or a redundant header) or a {@link CorruptionException} naming the file (and,
 * for damage inside a block, that block). Anything else fails: another exception type, a hang,
 * running out of memory or different data.
 *
 * <p>The random damage uses a fixed seed, printed at the start; rerun with
 * {@code -Dbetree.corruption.seed=N} to try another. The last test rewrites blocks with valid
 * checksums but impossible contents and reads them in a child JVM, so that a hang or an
 * OutOfMemoryError is reported (with a thread dump) instead of taking the test JVM down.
 */
class CorruptionTest {
    static final long SEED = Long.getLong("betree.corruption.seed", 0x5EEDC0DEL);
    static final int ROWS = 50_000;
    static final long CACHE = 32L << 20;
    static final Duration READ_TIMEOUT = Duration.ofSeconds(60);

    @TempDir
    static Path shared;
    static Path pristine;
    static Dataset data;
    static DataFileLayout layout;

    @TempDir
    Path work;

    /**
     * This class reads about a hundred damaged copies of a 50,000-row environment. Under paranoid
     * Netty leak detection (which the build may be configured with), which records a stack trace on
     * every buffer access, building the data set alone takes some 40 s instead of 1 s; leaks,
     * including those of the corruption paths, are {@link LeakDetectionTest}'s business, so this
     * class samples like production does and restores the level afterwards.
     */
    static ResourceLeakDetector.Level previousLeakLevel;

    @BeforeAll
    static void createPristineEnvironment() throws IOException {
        previousLeakLevel = ResourceLeakDetector.getLevel();
        ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.SIMPLE);
        System.out.println("CorruptionTest seed: " + SEED + " (rerun with -Dbetree.corruption.seed=" + SEED + ")");
        pristine = shared.resolve("pristine");
        long start = System.nanoTime();
        data = Dataset.create(pristine, SEED, ROWS, CACHE);
        layout = DataFileLayout.read(dataFile(pristine));
        System.out.printf("pristine environment: %d rows, %s, built in %d ms%n", data.rowCount(), layout,
                (System.nanoTime() - start) / 1_000_000);
        assertTrue(layout.blocks.size() >= 200, "expected many blocks, got " + layout);
    }

    @AfterAll
    static void restoreLeakDetection() {
        if (previousLeakLevel != null) {
            ResourceLeakDetector.setLevel(previousLeakLevel);
        }
    }

    static Path dataFile(Path dir) {
        return dir.toAbsolutePath().resolve("betree.data");
    }

    /** A fresh copy of the pristine directory (data file only; the lock file is recreated). */
    Path copy(String name) throws IOException {
        Path dir = work.resolve(name);
        Files.createDirectories(dir);
        Files.copy(dataFile(pristine), dataFile(dir), StandardCopyOption.REPLACE_EXISTING);
        return dir;
    }

    /** How reopening and reading everything ended. */
    record Outcome(BetreeException error) {
        boolean intact() {
            return error == null;
        }

        boolean corrupt() {
            return error instanceof CorruptionException;
        }

        @Override
        public String toString() {
            return intact() ? "intact" : error.getClass().getSimpleName() + ": " + error.getMessage();
        }
    }

    /**
     * Reopens {@code dir} and reads everything. Returns intact only if the contents are exactly the
     * original; returns the {@link BetreeException} if one was thrown; fails the test on different
     * data, on any other throwable and on a hang.
     */
    static Outcome reopenAndReadAll(Path dir) {
        return assertTimeoutPreemptively(READ_TIMEOUT, () -> {
            try (Environment env = Environment.open(dir, EnvironmentOptions.defaults().durability(Durability.NONE).cacheBytes(CACHE))) {
                data.verify(env);
                return new Outcome(null);
            } catch (BetreeException e) {
                return new Outcome(e);
            } catch (AssertionError e) {
                throw new AssertionError("damaged environment returned different data: " + e.getMessage(), e);
            } catch (Throwable t) {
                throw new AssertionError("reading a damaged environment threw " + t + " instead of a "
                        + "CorruptionException", t);
            }
        }, "reading the damaged environment hung");
    }

    /** Asserts a CorruptionException naming the data file of {@code dir} (and its block, if given). */
    static CorruptionException assertCorrupt(Outcome outcome, Path dir, Long block, String what) {
        if (!outcome.corrupt()) {
            fail(what + ": expected a CorruptionException, got " + outcome, outcome.error());
        }
        CorruptionException e = (CorruptionException) outcome.error();
        Path file = dataFile(dir);
        assertTrue(e.getMessage().contains(file.toString()), what + ": message does not name " + file + ": "
                + e.getMessage());
        assertEquals(file, e.file(), what + ": file()");
        if (block != null) {
            assertEquals(block.longValue(), e.blockNumber(), what + ": blockNumber() of " + e.getMessage());
            assertTrue(e.getMessage().contains("block " + block), what + ": message does not name block " + block
                    + ": " + e.getMessage());
        }
        return e;
    }

    static void assertIntact(Outcome outcome, String what) {
        if (!outcome.intact()) {
            fail(what + ": expected the original data, got " + outcome, outcome.error());
        }
    }

    @Test
    void undamagedCopyReadsBackExactly() throws IOException {
        Path dir = copy("undamaged");
        assertIntact(reopenAndReadAll(dir), "undamaged copy");
    }

    @Test
    void bitFlipInsideABlockIsReportedForThatBlock() throws IOException {
        Random random = new Random(SEED);
        for (int trial = 0; trial < 12; trial++) {
            DataFileLayout.Block b = layout.blocks.get(random.nextInt(layout.blocks.size()));
            long position = b.offset() + random.nextInt(b.length());
            int bit = random.nextInt(8);
            String what = "trial " + trial + ": bit " + bit + " of byte " + position + " (block " + b.number()
                    + " at " + b.offset() + "+" + b.length() + ", byte " + (position - b.offset()) + " of it)";
            Path dir = copy("flip-" + trial);
            flipBit(dataFile(dir), position, bit);
            Outcome outcome = reopenAndReadAll(dir);
            System.out.println(what + " -> " + outcome);
            assertCorrupt(outcome, dir, b.number(), what);
        }
    }

    @Test
    void burstOfRandomBytesInsideABlockIsReportedForThatBlock() throws IOException {
        Random random = new Random(SEED + 1);
        for (int trial = 0; trial < 6; trial++) {
            DataFileLayout.Block b = layout.blocks.get(random.nextInt(layout.blocks.size()));
            int length = Math.min(b.length(), 1 + random.nextInt(256));
            long position = b.offset() + random.nextInt(b.length() - length + 1);
            byte[] garbage = new byte[length];
            random.nextBytes(garbage);
            if (Arrays.equals(garbage, readAt(dataFile(pristine), position, length))) {
                continue;
            }
            String what = "trial " + trial + ": " + length + " random bytes at " + position + " (block " + b.number()
                    + " at " + b.offset() + "+" + b.length() + ")";
            Path dir = copy("burst-" + trial);
            overwrite(dataFile(dir), position, garbage);
            Outcome outcome = reopenAndReadAll(dir);
            System.out.println(what + " -> " + outcome);
            assertCorrupt(outcome, dir, b.number(), what);
        }
    }

    @Test
    void bitFlipAnywhereIsDetectedOrHarmless() throws IOException {
        Random random = new Random(SEED + 2);
        int harmless = 0;
        for (int trial = 0; trial < 16; trial++) {
            long position = (long) (random.nextDouble() * layout.fileSize);
            int bit = random.nextInt(8);
            DataFileLayout.Block b = layout.blockAt(position);
            String where;
            if (b != null) {
                where = "block " + b.number();
            } else if (layout.inNewestTable(position)) {
                where = "translation table";
            } else if (position < 2L * DataFileLayout.SLOT_SIZE) {
                int slot = (int) (position / DataFileLayout.SLOT_SIZE);
                where = (slot == layout.newest.slot() ? "newest" : "older") + " header slot "
                        + (position % DataFileLayout.SLOT_SIZE < DataFileLayout.HEADER_SIZE ? "" : "(unused part)");
            } else {
                where = "free space or padding";
            }
            String what = "trial " + trial + ": bit " + bit + " of byte " + position + " in " + where;
            Path dir = copy("anywhere-" + trial);
            flipBit(dataFile(dir), position, bit);
            Outcome outcome = reopenAndReadAll(dir);
            System.out.println(what + " -> " + outcome);
            if (b != null) {
                assertCorrupt(outcome, dir, b.number(), what);
            } else if (layout.inNewestTable(position)) {
                assertCorrupt(outcome, dir, null, what);
            } else if (position < DataFileLayout.HEADER_SIZE + (long) layout.newest.slot() * DataFileLayout.SLOT_SIZE
                    && position >= (long) layout.newest.slot() * DataFileLayout.SLOT_SIZE) {
                // The newest header is damaged: the older slot is the fallback. It describes the same
                // contents here (close() checkpointed right after an explicit checkpoint), so reading
                // back either works exactly or reports corruption.
                if (!outcome.intact()) {
                    assertCorrupt(outcome, dir, null, what);
                }
            } else {
                assertIntact(outcome, what);
                harmless++;
            }
        }
        System.out.println(harmless + " of 16 flips hit bytes nothing depends on");
    }

    @Test
    void misdirectedWriteOfAnotherBlockIsReported() throws IOException {
        Random random = new Random(SEED + 3);
        for (int trial = 0; trial < 3; trial++) {
            DataFileLayout.Block victim = layout.blocks.get(random.nextInt(layout.blocks.size()));
            DataFileLayout.Block source;
            do {
                source = layout.blocks.get(random.nextInt(layout.blocks.size()));
            } while (source.number() == victim.number());
            byte[] bytes = readAt(dataFile(pristine), source.offset(), Math.min(source.length(), victim.length()));
            String what = "block " + source.number() + "'s bytes written over block " + victim.number();
            Path dir = copy("misdirected-" + trial);
            overwrite(dataFile(dir), victim.offset(), bytes);
            Outcome outcome = reopenAndReadAll(dir);
            System.out.println(what + " -> " + outcome);
            assertCorrupt(outcome, dir, victim.number(), what);
        }
    }

    @Test
    void damagedTranslationTableIsReportedAtOpen() throws IOException {
        Random random = new Random(SEED + 4);
        for (int trial = 0; trial < 3; trial++) {
            long position = layout.newest.tableOffset() + (long) (random.nextDouble() * layout.newest.tableLength());
            String what = "flip in the translation table at byte " + position;
            Path dir = copy("table-" + trial);
            flipBit(dataFile(dir), position, random.nextInt(8));
            BetreeException opened = assertTimeoutPreemptively(READ_TIMEOUT, () -> {
                try (Environment env = Environment.open(dir)) {
                    return new BetreeException("opened " + env.directory() + " despite the damaged table");
                } catch (CorruptionException e) {
                    return e;
                }
            });
            Outcome outcome = new Outcome(opened);
            System.out.println(what + " -> " + outcome);
            CorruptionException e = assertCorrupt(outcome, dir, null, what);
            assertTrue(e.getMessage().contains("translation table"), e.getMessage());
        }
    }

    @Test
    void truncatedFileIsReported() throws IOException {
        long size = Files.size(dataFile(pristine));
        long[] sizes = {0, 1, 100, 4096, 4096 + 200, 8192, 8192 + 1000, size / 3, size / 2, size - 4096, size - 100,
            size - 1};
        for (long s : sizes) {
            Path dir = copy("truncated-" + s);
            truncate(dataFile(dir), s);
            Outcome outcome = reopenAndReadAll(dir);
            String what = "truncated from " + size + " to " + s + " bytes";
            System.out.println(what + " -> " + outcome);
            assertCorrupt(outcome, dir, null, what);
        }
    }

    @Test
    void zeroedOlderHeaderSlotIsHarmless() throws IOException {
        Path dir = copy("zero-older");
        overwrite(dataFile(dir), (long) layout.olderSlot() * DataFileLayout.SLOT_SIZE,
                new byte[DataFileLayout.SLOT_SIZE]);
        assertIntact(reopenAndReadAll(dir), "older header slot " + layout.olderSlot() + " zeroed");
    }

    @Test
    void zeroedNewestHeaderSlotFallsBackOrIsReported() throws IOException {
        Path dir = copy("zero-newest");
        overwrite(dataFile(dir), (long) layout.newest.slot() * DataFileLayout.SLOT_SIZE,
                new byte[DataFileLayout.SLOT_SIZE]);
        Outcome outcome = reopenAndReadAll(dir);
        String what = "newest header slot " + layout.newest.slot() + " zeroed";
        System.out.println(what + " -> " + outcome);
        if (!outcome.intact()) {
            assertCorrupt(outcome, dir, null, what);
        }
    }

    @Test
    void bothHeaderSlotsZeroedIsReported() throws IOException {
        Path dir = copy("zero-both");
        overwrite(dataFile(dir), 0, new byte[2 * DataFileLayout.SLOT_SIZE]);
        Outcome outcome = reopenAndReadAll(dir);
        System.out.println("both header slots zeroed -> " + outcome);
        CorruptionException e = assertCorrupt(outcome, dir, null, "both header slots zeroed");
        assertEquals(-1, e.blockNumber());
    }

    @Test
    void damagedHeaderFieldsAreReported() throws IOException {
        // Damage both slots' checksummed bytes differently: one a torn tail, one a flipped field.
        Path dir = copy("headers-damaged");
        byte[] slot0 = readAt(dataFile(dir), 0, DataFileLayout.HEADER_SIZE);
        byte[] slot1 = readAt(dataFile(dir), DataFileLayout.SLOT_SIZE, DataFileLayout.HEADER_SIZE);
        Arrays.fill(slot0, 64, DataFileLayout.HEADER_SIZE, (byte) 0);
        slot1[33] ^= 0x10;
        overwrite(dataFile(dir), 0, slot0);
        overwrite(dataFile(dir), DataFileLayout.SLOT_SIZE, slot1);
        Outcome outcome = reopenAndReadAll(dir);
        System.out.println("both headers damaged -> " + outcome);
        CorruptionException e = assertCorrupt(outcome, dir, null, "both headers damaged");
        assertTrue(e.getMessage().contains("slot 0") && e.getMessage().contains("slot 1"), e.getMessage());
    }

    @Test
    void wholeFileOverwrittenWithRandomBytesIsReported() throws IOException {
        Path dir = copy("random");
        byte[] garbage = new byte[(int) Files.size(dataFile(dir))];
        new Random(SEED + 5).nextBytes(garbage);
        Files.write(dataFile(dir), garbage);
        Outcome outcome = reopenAndReadAll(dir);
        System.out.println("random file -> " + outcome);
        CorruptionException e = assertCorrupt(outcome, dir, null, "random bytes");
        assertTrue(e.getMessage().contains("not a betree"), e.getMessage());
    }

    @Test
    void foreignFilesAreReported() throws IOException {
        List<byte[]> foreign = new ArrayList<>();
        foreign.add("This is not a database.\nJust some text someone saved as betree.data.\n"
                .repeat(500).getBytes(StandardCharsets.UTF_8));
        foreign.add(new byte[] {'B'});
        foreign.add(new byte[0]);
        byte[] almost = new byte[3 * DataFileLayout.SLOT_SIZE];
        System.arraycopy(DataFileLayout.MAGIC, 0, almost, 0, 8); // right magic, nothing else
        foreign.add(almost);
        byte[] zip = new byte[20_000];
        zip[0] = 'P';
        zip[1] = 'K';
        zip[2] = 3;
        zip[3] = 4;
        foreign.add(zip);
        for (int i = 0; i < foreign.size(); i++) {
            Path dir = work.resolve("foreign-" + i);
            Files.createDirectories(dir);
            Files.write(dataFile(dir), foreign.get(i));
            Outcome outcome = reopenAndReadAll(dir);
            String what = "foreign file of " + foreign.get(i).length + " bytes";
            System.out.println(what + " -> " + outcome);
            assertCorrupt(outcome, dir, null, what);
        }
    }

    @Test
    void dataFileThatIsADirectoryGivesAClearError() throws IOException {
        Path dir = work.resolve("directory");
        Files.createDirectories(dataFile(dir));
        Outcome outcome = reopenAndReadAll(dir);
        System.out.println("betree.data is a directory -> " + outcome);
        assertFalse(outcome.intact());
        assertTrue(outcome.error() instanceof BetreeIOException || outcome.error() instanceof CorruptionException,
                outcome.toString());
        assertTrue(outcome.error().getMessage().contains(dir.toAbsolutePath().toString()), outcome.toString());
    }

    @Test
    void newerFormatVersionIsRefusedWithAClearMessage() throws IOException {
        Path dir = copy("newer-version");
        long at = (long) layout.newest.slot() * DataFileLayout.SLOT_SIZE;
        byte[] header = readAt(dataFile(dir), at, DataFileLayout.HEADER_SIZE);
        ByteBuffer.wrap(header).order(ByteOrder.LITTLE_ENDIAN).putInt(8, 99);
        DataFileLayout.fixHeaderCrc(header);
        overwrite(dataFile(dir), at, header);
        Outcome outcome = reopenAndReadAll(dir);
        System.out.println("header of format version 99 -> " + outcome);
        assertNotNull(outcome.error(), "a file of format version 99 was opened");
        assertFalse(outcome.corrupt(), "a newer version is not corruption: " + outcome);
        assertTrue(outcome.error().getMessage().contains(dataFile(dir).toString())
                && outcome.error().getMessage().contains("newer version"), outcome.toString());
    }

    // ---------------------------------------------------------------------------------------------
    // Damage that passes every checksum: a block rewritten with a valid CRC but impossible contents
    // (what a bug in an older writer, or a deliberate edit, would leave). Node parsing and tree
    // navigation must reject it as corruption too. Run in a child JVM, since such damage could make
    // a careless reader loop forever or allocate without bound.
    // ---------------------------------------------------------------------------------------------

    /** The on-disk bytes (header and payload) of {@code b} in {@code file}. */
    static byte[] blockBytes(Path file, DataFileLayout.Block b) throws IOException {
        return readAt(file, b.offset(), b.length());
    }

    /** The first uncompressed block (codec 0) whose node tag is {@code tag}. */
    static DataFileLayout.Block firstUncompressed(char tag) throws IOException {
        return firstUncompressed(tag, 1);
    }

    /** The first uncompressed block with {@code tag} whose block holds at least {@code payload} bytes after the header. */
    static DataFileLayout.Block firstUncompressed(char tag, int payload) throws IOException {
        for (DataFileLayout.Block b : layout.blocks) {
            if (b.codecId() == 0 && b.length() >= DataFileLayout.BLOCK_HEADER_SIZE + payload
                    && readAt(dataFile(pristine), b.offset() + DataFileLayout.BLOCK_HEADER_SIZE, 1)[0] == tag) {
                return b;
            }
        }
        throw new IllegalStateException("no uncompressed block with tag " + tag + " in " + layout);
    }

    /**
     * Applies {@code edit} to the payload of block {@code b} (big-endian view, position 0 = node tag)
     * and rewrites the block with a correct checksum.
     */
    static void rewritePayload(Path file, DataFileLayout.Block b, java.util.function.Consumer<ByteBuffer> edit)
            throws IOException {
        byte[] bytes = blockBytes(file, b);
        ByteBuffer payload = ByteBuffer.wrap(bytes, DataFileLayout.BLOCK_HEADER_SIZE,
                bytes.length - DataFileLayout.BLOCK_HEADER_SIZE).slice();
        edit.accept(payload);
        DataFileLayout.fixBlockCrc(bytes);
        overwrite(file, b.offset(), bytes);
    }

    /** Rewrites the root block of index {@code name} in the catalog, fixing the table and header CRCs. */
    static void rewriteCatalogRoot(Path file, String name, long newRoot) throws IOException {
        DataFileLayout.Header h = layout.newest;
        byte[] table = readAt(file, h.tableOffset(), (int) h.tableLength());
        ByteBuffer catalog = ByteBuffer.wrap(table, DataFileLayout.TABLE_PREFIX, h.rootLength()).slice();
        // Magic, version, last timestamp, checkpoint LSN, next index id; then the count.
        catalog.position(28);
        int count = catalog.getInt();
        boolean found = false;
        for (int i = 0; i < count && !found; i++) {
            catalog.getInt(); // index id
            byte[] n = new byte[catalog.getShort() & 0xffff];
            catalog.get(n);
            if (new String(n, StandardCharsets.UTF_8).equals(name)) {
                catalog.putLong(catalog.position(), newRoot);
                found = true;
            }
            catalog.position(catalog.position() + 8);
            int codecName = catalog.get() & 0xff;
            catalog.position(catalog.position() + codecName + 16);
            skipFunctionNames(catalog);
        }
        assertTrue(found, "index " + name + " not in the catalog");
        overwrite(file, h.tableOffset(), table);
        long slotAt = (long) h.slot() * DataFileLayout.SLOT_SIZE;
        byte[] header = readAt(file, slotAt, DataFileLayout.HEADER_SIZE);
        ByteBuffer.wrap(header).order(ByteOrder.LITTLE_ENDIAN).putInt(48,
                DataFileLayout.crc32c(table, 0, table.length));
        DataFileLayout.fixHeaderCrc(header);
        overwrite(file, slotAt, header);
    }

    /** Skips a catalog entry's update function names (catalog version 2): a count, then each name. */
    private static void skipFunctionNames(ByteBuffer catalog) {
        for (int names = catalog.getShort() & 0xffff; names > 0; names--) {
            int length = catalog.get() & 0xff;
            catalog.position(catalog.position() + length);
        }
    }

    /** The root block of index {@code name} according to the newest checkpoint's catalog. */
    static long catalogRoot(String name) throws IOException {
        DataFileLayout.Header h = layout.newest;
        byte[] table = readAt(dataFile(pristine), h.tableOffset(), (int) h.tableLength());
        ByteBuffer catalog = ByteBuffer.wrap(table, DataFileLayout.TABLE_PREFIX, h.rootLength()).slice();
        // Magic, version, last timestamp, checkpoint LSN, next index id; then the count.
        catalog.position(28);
        int count = catalog.getInt();
        for (int i = 0; i < count; i++) {
            catalog.getInt(); // index id
            byte[] n = new byte[catalog.getShort() & 0xffff];
            catalog.get(n);
            long root = catalog.getLong();
            if (new String(n, StandardCharsets.UTF_8).equals(name)) {
                return root;
            }
            int codecName = catalog.get() & 0xff;
            catalog.position(catalog.position() + codecName + 16);
            skipFunctionNames(catalog);
        }
        throw new IllegalStateException("index " + name + " not in the catalog");
    }

    static DataFileLayout.Block block(long number) {
        return layout.blocks.stream().filter(b -> b.number() == number).findFirst().orElseThrow();
    }

    static final long MISSING_BLOCK = 1_000_000;

    @org.junit.jupiter.params.ParameterizedTest(name = "{0}")
    @org.junit.jupiter.params.provider.ValueSource(strings = {
        "basement with an impossible entry count",
        "basement entry whose key runs past the end",
        "basement chunk whose checksum does not match",
        "basement chunk of another version",
        "leaf whose chunk maps do not match their checksum",
        "unknown node tag",
        "leaf with no basements",
        "leaf pointing at itself as a basement",
        "leaf pointing at a block that does not exist",
        "leaf head whose checksum does not match",
        "leaf head longer than its block",
        "internal node of height 0",
        "internal node whose child is a basement",
        "internal node whose child does not exist",
        "internal node whose child is itself",
        "root whose first child is itself (point lookup)",
        "internal node with a negative message buffer size",
        "internal node whose message buffer is a basement",
        "message buffer whose message runs past the end",
        "leaf whose key filter claims more words than it holds",
        "leaf whose key filter has no probes",
        "catalog root that does not exist",
        "catalog root that is a basement",
    })
    void checksumValidButMalformedDataIsReportedAsCorruption(String damage) throws Exception {
        Path dir = copy("crafted");
        Path file = dataFile(dir);
        DataFileLayout.Block basement = firstRawChunks();
        DataFileLayout.Block leaf = firstUncompressed('Q');
        DataFileLayout.Block internal = firstUncompressed('I');
        switch (damage) {
            // A chunked basement: tag, stamp (8), row count (4 at 9), chunk count (2); its first
            // chunk's record at 15: stamp (8), codec (1), rows (4), lengths (4 and 4), CRC (4),
            // then the rows (stored as they are: this basement's index has no codec), from 40.
            case "basement with an impossible entry count" ->
                    rewritePayload(file, basement, p -> p.putInt(9, Integer.MAX_VALUE));
            case "basement entry whose key runs past the end" -> rewritePayload(file, basement, p -> {
                p.putInt(40 + 3, Integer.MAX_VALUE - 3); // the first row's value length
                DataFileLayout.fixChunkCrc(p, 15);
            });
            case "basement chunk whose checksum does not match" ->
                    rewritePayload(file, basement, p -> p.put(40, (byte) (p.get(40) ^ 1)));
            case "basement chunk of another version" -> rewritePayload(file, basement, p -> {
                p.putLong(15, p.getLong(15) ^ 1);
                DataFileLayout.fixChunkCrc(p, 15);
            });
            case "leaf whose chunk maps do not match their checksum" -> rewritePayload(file, leaf, p -> {
                int lastOfMaps = 17 + p.getInt(1) + p.getInt(9) - 1; // the maps follow the head
                p.put(lastOfMaps, (byte) (p.get(lastOfMaps) ^ 1));
            });
            case "unknown node tag" -> rewritePayload(file, leaf, p -> p.put(0, (byte) 'X'));
            // A leaf's head: basement count (4 bytes at 17), then the first basement's block (8 at 21).
            case "leaf with no basements" -> rewritePayload(file, leaf, leafHead(p -> p.putInt(17, 0)));
            case "leaf pointing at itself as a basement" ->
                    rewritePayload(file, leaf, leafHead(p -> p.putLong(21, leaf.number())));
            case "leaf pointing at a block that does not exist" ->
                    rewritePayload(file, leaf, leafHead(p -> p.putLong(21, MISSING_BLOCK)));
            case "leaf head whose checksum does not match" ->
                    rewritePayload(file, leaf, p -> p.putLong(21, p.getLong(21) ^ 1));
            case "leaf head longer than its block" -> rewritePayload(file, leaf, p -> p.putInt(1, 1 << 30));
            case "internal node of height 0" -> rewritePayload(file, internal, p -> p.put(1, (byte) 0));
            case "internal node whose child is a basement" ->
                    rewritePayload(file, internal, p -> p.putLong(6, basement.number()));
            case "internal node whose child does not exist" ->
                    rewritePayload(file, internal, p -> p.putLong(6, MISSING_BLOCK));
            case "internal node whose child is itself" ->
                    rewritePayload(file, internal, p -> p.putLong(6, internal.number()));
            case "root whose first child is itself (point lookup)" -> {
                DataFileLayout.Block root = block(catalogRoot("plain"));
                assertEquals('I', blockBytes(file, root)[DataFileLayout.BLOCK_HEADER_SIZE], "root is not internal");
                rewritePayload(file, root, p -> p.putLong(6, root.number()));
            }
            // Child 0's record: child block (8 bytes at 6), buffer block (8 at 14), buffer bytes (4 at 22).
            case "internal node with a negative message buffer size" ->
                    rewritePayload(file, internal, p -> p.putInt(22, -1));
            case "internal node whose message buffer is a basement" -> rewritePayload(file, internal, p -> {
                p.putLong(14, basement.number());
                p.putInt(22, 100); // recorded as holding messages, so that reads fetch it
            });
            case "message buffer whose message runs past the end" ->
                    // The first message's value length (after tag 1, type 1, msn 8, txn 8, key length 2).
                    rewritePayload(file, firstUncompressed('M', 1 + 23), p -> p.putInt(20, Integer.MAX_VALUE - 3));
            case "leaf whose key filter claims more words than it holds" ->
                    rewritePayload(file, leaf, p -> p.putInt(firstFilter(p) + 5, 1 << 28));
            case "leaf whose key filter has no probes" -> rewritePayload(file, leaf, p -> p.put(firstFilter(p), (byte) 0));
            case "catalog root that does not exist" -> rewriteCatalogRoot(file, "plain", MISSING_BLOCK);
            case "catalog root that is a basement" -> rewriteCatalogRoot(file, "plain", basement.number());
            default -> throw new IllegalArgumentException(damage);
        }
        // A point lookup of the empty key follows every node's first child; the others read everything.
        List<String> args = damage.contains("point lookup") ? List.of(dir.toString(), "get-empty-key")
                : List.of(dir.toString());
        ChildJvm.Result r = ChildJvm.run(ReadEverything.class, List.of("-Xmx64m", "-XX:MaxDirectMemorySize=256m"),
                args, work, Duration.ofSeconds(20));
        String outcome = r.field("OUTCOME");
        System.out.println(damage + " -> " + (outcome == null ? r.describe() : outcome));
        assertFalse(r.timedOut(), damage + ": reading hung (killed after 20 s)\n" + r.describe());
        assertEquals(0, r.exitCode(), damage + ": the reader died\n" + r.describe());
        assertNotNull(outcome, r.describe());
        // A leaf's head and a basement's chunks have checksums of their own, and a chunk names its
        // version: damage to them never goes unnoticed.
        if (outcome.startsWith("intact") && !damage.startsWith("leaf head") && !damage.startsWith("basement chunk")) {
            return; // the edit went unnoticed but the data read back was at least consistent
        }
        assertTrue(outcome.startsWith(CorruptionException.class.getName() + " "),
                damage + ": expected a CorruptionException, got " + outcome + "\n" + r.stderr());
        assertTrue(outcome.contains(file.toString()), damage + ": message does not name the file: " + outcome);
    }

    /** Where a leaf payload's first key filter starts: after the 17 bytes before its head, the head and the chunk maps. */
    private static int firstFilter(ByteBuffer leaf) {
        return 17 + leaf.getInt(1) + leaf.getInt(9);
    }

    /** The first chunked basement whose first chunk is stored as it is (codec 0), of more than one row. */
    private static DataFileLayout.Block firstRawChunks() throws IOException {
        for (DataFileLayout.Block b : layout.blocks) {
            if (b.length() < DataFileLayout.BLOCK_HEADER_SIZE + 64) {
                continue;
            }
            byte[] head = readAt(dataFile(pristine), b.offset() + DataFileLayout.BLOCK_HEADER_SIZE, 40);
            ByteBuffer p = ByteBuffer.wrap(head);
            if (head[0] == 'K' && head[15 + 8] == 0 && p.getInt(9) > 1 && p.getInt(15 + 17) > 0) {
                return b;
            }
        }
        throw new IllegalStateException("no chunked basement stored as it is in " + layout);
    }

    /** {@code edit} of a leaf's head, then the head's CRC made right again, so that the edit reaches the parser. */
    private static java.util.function.Consumer<ByteBuffer> leafHead(java.util.function.Consumer<ByteBuffer> edit) {
        return p -> {
            edit.accept(p);
            DataFileLayout.fixLeafHeadCrc(p);
        };
    }
}
