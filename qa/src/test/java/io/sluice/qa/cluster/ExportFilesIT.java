package io.sluice.qa.cluster;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ExportFilesIT
{
    @TempDir
    Path directory;

    @Test
    void leavesOutALastLineTheExporterIsStillWriting() throws Exception
    {
        Files.writeString(directory.resolve("partition-2.jsonl"),
            "{\"partitionId\":2,\"position\":7,\"key\":\"a\",\"timestamp\":1,\"payload\":{\"n\":1}}\n" +
            "{\"partitionId\":2,\"position\":8,\"key\":null,\"timestamp\":2,\"payload\":[1,2]}\n" +
            "{\"partitionId\":2,\"position\":9,\"ke");

        final ExportFiles files = new ExportFiles(directory);

        assertThat(files.records(2)).containsExactly(
            new ExportedRecord(2, 7, "a", 1, "{\"n\":1}"),
            new ExportedRecord(2, 8, null, 2, "[1,2]"));
    }

    @Test
    void aMissingFileHasNoRecords()
    {
        assertThat(new ExportFiles(directory).records(5)).isEmpty();
        assertThat(new ExportFiles(directory).bytes(5)).isEmpty();
    }

    @Test
    void aBrokenCompleteLineIsAnError() throws Exception
    {
        Files.writeString(directory.resolve("partition-1.jsonl"),
            "{\"partitionId\":1,\"position\":1\n{\"partitionId\":1,\"position\":2}\n");

        assertThatThrownBy(() -> new ExportFiles(directory).records(1))
            .hasMessageContaining("partition-1.jsonl line 1 is not a record");
    }
}
