package io.sluice.gateway.exporting;

import io.sluice.protocol.cluster.PartitionReplica;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

@Timeout(10)
class ExportingTargetsReaderTest
{
    private final ExportingTargetsReader reader = new ExportingTargetsReader();

    @ParameterizedTest
    @ValueSource(strings = { "", " ", "\n\t " })
    void noBodyMeansEveryPair(final String body)
    {
        assertThat(reader.read(bytes(body))).isEmpty();
        assertThat(reader.read(null)).isEmpty();
    }

    @Test
    void readsTheListedTargetsInOrder()
    {
        assertThat(reader.read(bytes("{\"targets\": [{\"brokerId\": 1, \"partitionId\": 4}, {\"partitionId\": 2, \"brokerId\": 0}]}")))
            .isEqualTo(Optional.of(List.of(new PartitionReplica(1, 4), new PartitionReplica(0, 2))));
        assertThat(reader.read(bytes("{\"targets\": []}"))).isEqualTo(Optional.of(List.of()));
    }

    @ParameterizedTest
    @ValueSource(strings = {
        "{\"targets\": [",
        "not json",
        "[]",
        "42",
        "{}",
        "{\"targets\": null}",
        "{\"targets\": {\"brokerId\": 1, \"partitionId\": 4}}",
        "{\"target\": [{\"brokerId\": 1, \"partitionId\": 4}]}",
        "{\"targets\": [], \"soft\": true}",
        "{\"targets\": [{\"brokerId\": \"1\", \"partitionId\": 4}]}",
        "{\"targets\": [{\"brokerId\": 1.5, \"partitionId\": 4}]}",
        "{\"targets\": [{\"brokerId\": 1}]}",
        "{\"targets\": [{\"brokerId\": 1, \"partitionId\": 4, \"extra\": 0}]}",
        "{\"targets\": [{\"brokerId\": 1, \"partitionId\": 99999999999}]}",
        "{\"targets\": [7]}",
        "{\"targets\": [], \"targets\": []}",
        "{\"targets\": []} {}"
    })
    void refusesAnythingButTheDocumentedShape(final String body)
    {
        assertThatThrownBy(() -> reader.read(bytes(body))).isInstanceOf(InvalidTargetsException.class).hasMessageNotContaining("\n");
    }

    @Test
    void errorsNameTheOffendingField()
    {
        assertThatThrownBy(() -> reader.read(bytes("{\"targets\": [{\"brokerId\": 0, \"partitionId\": 1}, {\"brokerId\": \"x\", \"partitionId\": 1}]}")))
            .hasMessage("targets[1].brokerId must be an integer, was \"x\"");
        assertThatThrownBy(() -> reader.read(bytes("{\"target\": []}")))
            .hasMessage("unknown field 'target' (the body has only \"targets\")");
    }

    private static byte[] bytes(final String text)
    {
        return text.getBytes(StandardCharsets.UTF_8);
    }
}
