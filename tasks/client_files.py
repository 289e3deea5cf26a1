"""The client's file work: a dataset's export to and import from jsonl files (the format of
`engram export` / `engram import`), and files and directories as remember items. EngramClient
takes the export and import methods from FileTransfer; they call the tasks through its `call`."""

from __future__ import annotations

import base64
import uuid
from collections.abc import Iterable, Iterator
from pathlib import Path

from engram.models.payloads.export import ExportPage, ImportResult
from engram.pipelines.export import check_header, check_record, decoded_lines, header_line, record_line

TEXT_SUFFIXES = {".txt", ".md", ".markdown", ".csv", ".json", ".py", ".rst", ".html", ".xml", ".yaml", ".yml"}


class EngramError(RuntimeError):
    """A task failed; the message is the task's own error."""


class FileTransfer:
    """Export and import, for a client with `call(name, **kwargs) -> dict` (EngramClient)."""

    def export_pages(self, dataset: str, *, user: str = "default", limit: int = 500) -> Iterator[ExportPage]:
        """A dataset's export (read grant), page after page: the first carries the header."""
        cursor = None
        while True:
            page = ExportPage.model_validate(self.call("engram.export", dataset=dataset, user=user, cursor=cursor,
                                                       limit=limit))
            yield page
            cursor = page.cursor
            if cursor is None:
                return

    def export_to(self, path: str | Path, dataset: str, *, user: str = "default", limit: int = 500) -> int:
        """Write the dataset's jsonl export (as `engram export` does) to `path`; returns the records written.
        The file appears only once complete."""
        path = Path(path)
        partial = path.with_name(path.name + ".partial")
        records = 0
        try:
            with partial.open("w", encoding="utf-8") as out:
                for page in self.export_pages(dataset, user=user, limit=limit):
                    if page.header is not None:
                        out.write(header_line(page.header) + "\n")
                    for record in page.records:
                        out.write(record_line(record["table"], record["row"]) + "\n")
                    records += len(page.records)
            partial.replace(path)
        finally:
            partial.unlink(missing_ok=True)
        return records

    def import_pages(self, pages: Iterable[ExportPage | dict], *, user: str = "default", dataset: str | None = None,
                     import_id: str | None = None) -> ImportResult:
        """Import export pages (from export_pages or another deployment) as the caller's own dataset
        (default the exported name): one part per page, all written in one transaction by the last."""
        import_id = import_id or uuid.uuid4().hex
        pages = iter(pages)
        page = next(pages, None)
        if page is None:
            raise EngramError("engram.import: no pages to import")
        part = 0
        while page is not None:
            page = ExportPage.model_validate(page)
            following = next(pages, None)
            kwargs = {"import_id": import_id, "user": user, "part": part, "records": page.records,
                      "last": following is None, "dataset": dataset}
            if part == 0:
                kwargs["header"] = page.header
            result = ImportResult.model_validate(self.call("engram.import", **kwargs))
            page, part = following, part + 1
        return result

    def import_file(self, path: str | Path, *, user: str = "default", dataset: str | None = None,
                    part_size: int = 500) -> ImportResult:
        """Import a jsonl file written by `engram export` or export_to, in parts of `part_size` records.
        A malformed line is named before the part holding it is sent; nothing is written unless all is."""
        if not 1 <= part_size <= 5000:
            raise ValueError(f"part_size must be 1..5000, got {part_size}")

        def pages() -> Iterator[ExportPage]:
            with Path(path).open(encoding="utf-8") as lines:
                header, records = None, []
                for where, obj in decoded_lines(lines):
                    if header is None:
                        header = check_header(obj)
                        page_header = header
                        continue
                    check_record(obj, where)
                    records.append(obj)
                    if len(records) == part_size:
                        yield ExportPage(header=page_header, records=records)
                        page_header, records = None, []
                if header is None:  # an empty file
                    check_header(None)
                yield ExportPage(header=page_header, records=records)

        try:
            return self.import_pages(pages(), user=user, dataset=dataset)
        except (ValueError, OSError, UnicodeDecodeError) as exc:  # BadInput is a ValueError
            raise EngramError(f"{path}: {exc}") from None


def items_from_paths(paths: Iterable[str | Path]) -> list[dict]:
    """Files become items; directories are walked (sorted, hidden files skipped)."""
    out: list[dict] = []
    for raw in paths:
        path = Path(raw)
        if not path.exists():
            raise FileNotFoundError(f"no such file or directory: {path}")
        files = sorted(p for p in path.rglob("*") if p.is_file() and not any(
            part.startswith(".") for part in p.relative_to(path).parts)) if path.is_dir() else [path]
        for file in files:
            data = file.read_bytes()
            item: dict = {"name": file.name, "source": str(file.resolve())}
            if file.suffix.lower() in TEXT_SUFFIXES:
                try:
                    item["text"] = data.decode("utf-8")
                except UnicodeDecodeError:
                    item["content_b64"] = base64.b64encode(data).decode()
            else:
                item["content_b64"] = base64.b64encode(data).decode()
            out.append(item)
    return out
