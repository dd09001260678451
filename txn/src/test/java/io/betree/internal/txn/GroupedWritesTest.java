package io.betree.internal.txn;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

class GroupedWritesTest {
    /** A write to a tree; trees are compared by identity, as the engine's are. */
    private record Write(Object tree, String key) {
    }

    private static final Object A = new Object();
    private static final Object B = new Object();
    private static final Object C = new Object();
    private static final Function<Write, Object> TREE = Write::tree;

    @Test
    void runsOfOneTreeEachBecomeGroupsInTheOrderTheirTreesFirstAppear() {
        List<Write> writes = List.of(new Write(B, "1"), new Write(B, "2"), new Write(A, "3"), new Write(C, "4"),
                new Write(C, "5"));
        List<List<Write>> groups = GroupedWrites.byTree(writes, TREE);
        assertEquals(List.of(writes.subList(0, 2), writes.subList(2, 3), writes.subList(3, 5)), groups);
        assertEquals(List.of(B, A, C), GroupedWrites.trees(groups, TREE));
    }

    @Test
    void aTreeWhoseWritesComeInSeveralRunsGetsThemAllInOneGroupInTheirOrder() {
        List<Write> writes = List.of(new Write(A, "1"), new Write(B, "2"), new Write(A, "3"), new Write(B, "4"),
                new Write(C, "5"), new Write(A, "6"));
        List<List<Write>> groups = GroupedWrites.byTree(writes, TREE);
        assertEquals(List.of(
                List.of(writes.get(0), writes.get(2), writes.get(5)),
                List.of(writes.get(1), writes.get(3)),
                List.of(writes.get(4))), groups);
        assertEquals(List.of(A, B, C), GroupedWrites.trees(groups, TREE));
    }

    @Test
    void treesAreToldApartByIdentityNotEquality() {
        Object twin = new String("tree");
        Object other = new String("tree");
        List<Write> writes = List.of(new Write(twin, "1"), new Write(other, "2"), new Write(twin, "3"));
        assertEquals(List.of(List.of(writes.get(0), writes.get(2)), List.of(writes.get(1))),
                GroupedWrites.byTree(writes, TREE));
    }

    @Test
    void runsAreViewsOfTheWritesNotCopies() {
        List<Write> writes = new ArrayList<>(List.of(new Write(A, "1"), new Write(A, "2"), new Write(B, "3")));
        List<List<Write>> groups = GroupedWrites.byTree(writes, TREE);
        Write replaced = new Write(A, "replaced");
        writes.set(1, replaced);
        assertSame(replaced, groups.get(0).get(1));
    }

    @Test
    void noWritesMakeNoGroups() {
        assertTrue(GroupedWrites.byTree(List.<Write>of(), TREE).isEmpty());
    }
}
