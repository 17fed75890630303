package io.sluice.protocol.cluster;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.List;
import java.util.TreeSet;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class PartitionReplicaTest
{
    @Test
    void aPairWrittenBrokerColonPartitionReadsBackAsItsLabel()
    {
        assertThat(PartitionReplica.parse("1:4")).isEqualTo(new PartitionReplica(1, 4));
        assertThat(PartitionReplica.parse(" 0 : 12 ")).isEqualTo(new PartitionReplica(0, 12));
        assertThat(new PartitionReplica(2, 7).label()).isEqualTo("2:7");
        assertThat(PartitionReplica.parse(new PartitionReplica(2, 7).label())).isEqualTo(new PartitionReplica(2, 7));
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "1", "1:", ":4", "a:4", "1:b", "1:4:5", "-1:4", "1:0"})
    void anythingElseIsRefusedSayingWhatAPairLooksLike(final String text)
    {
        assertThatThrownBy(() -> PartitionReplica.parse(text))
            .isInstanceOf(IllegalArgumentException.class)
            .hasMessageStartingWith("'" + text + "'");
    }

    @Test
    void pairsSortByPartitionThenBroker()
    {
        final TreeSet<PartitionReplica> sorted = new TreeSet<>(List.of(new PartitionReplica(1, 2),
            new PartitionReplica(0, 2), new PartitionReplica(2, 1)));
        assertThat(sorted).extracting(PartitionReplica::label).containsExactly("2:1", "0:2", "1:2");
    }
}
