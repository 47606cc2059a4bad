"""Checks of a parsed batch against what other files hold: one image or report per file, and comparisons
that stay within the patient and look back at another study. Plain functions over the parsed files and
what the graph (or the bulk load) already holds; :func:`graph.ingest.store_files` calls them before
writing.

An image id names one Chest ImaGenome image (``dicom_id``) and a report id one RadGraph ``doc_key``; the
same id in two files would store one node with two files' content (or two links to it), so the later
claim (graph first, then file order in the batch) is rejected, naming both files. A Chest ImaGenome
comparison relates an image to an image of the patient's prior study (docs/formats.md §1.5): one naming an
image of another patient, or of its own study, is rejected with the whole scene graph, as any other field
error of a scene graph is.
"""

from __future__ import annotations

from graph.ingest.parse import drop_records
from graph.records import ParsedFile, Rejection


def record_ids(parsed: list[ParsedFile]) -> tuple[set[str], set[str]]:
    """The image ids and report ids of the batch (what :func:`check_record_files` asks the graph about)."""
    return ({i.image_id for pf in parsed for i in pf.images}, {r.report_id for pf in parsed for r in pf.reports})


def prior_image_ids(parsed: list[ParsedFile]) -> set[str]:
    """The images the batch's comparisons name as prior images."""
    return {m.prior_image_id for pf in parsed for m in pf.mentions if m.prior_image_id}


def check_record_files(parsed: list[ParsedFile], stored: dict[tuple[str, str], str]) -> list[ParsedFile]:
    """Reject images and reports that another file already holds.

    Args:
        parsed: the batch's parsed files, in order.
        stored: ``("image" | "report", id) -> file`` for the ids the graph already holds.

    Returns:
        the parsed files without the rejected records; each rejection (field ``image_id`` or
        ``doc_key``) names the other file and is appended to its file's rejections.
    """
    owner = dict(stored)
    out = []
    for pf in parsed:
        bad: set[str] = set()
        claims = [("image", i.image_id, "image_id") for i in pf.images]
        claims += [("report", r.report_id, "doc_key") for r in pf.reports]
        for kind, rid, field in claims:
            other = owner.setdefault((kind, rid), pf.path)
            if other != pf.path:
                pf.rejections.append(Rejection(pf.path, rid, field, f"{kind} {rid} is already stored from "
                                                                    f"{other}; one {kind} comes from one file"))
                bad.add(rid)
        out.append(drop_records(pf, bad))
    return out


def check_comparisons(parsed: list[ParsedFile], stored: dict[str, tuple[str, str]]) -> list[ParsedFile]:
    """Reject records whose comparison names an image of another patient or of the record's own study.

    Args:
        parsed: the batch's parsed files, in order.
        stored: ``image_id -> (study_id, patient_id)`` for prior images the graph holds; the batch's own
            images are added. A prior image found in neither is left alone (its change stays on the mention).

    Returns:
        the parsed files without the rejected records (field ``relationships.object_id``).
    """
    where = dict(stored)
    patient_of = {s.study_id: s.patient_id for pf in parsed for s in pf.studies}
    for pf in parsed:
        where.update({i.image_id: (i.study_id, patient_of.get(i.study_id, "")) for i in pf.images})
    out = []
    for pf in parsed:
        bad: set[str] = set()
        for m in pf.mentions:
            if m.prior_image_id not in where or m.record in bad:
                continue
            study, patient = where[m.prior_image_id]
            reason = (f"compares with image {m.prior_image_id} of study {study}, the record's own study"
                      if study == m.study_id else
                      f"compares with image {m.prior_image_id} of patient {patient}, not of patient "
                      f"{patient_of.get(m.study_id)}" if patient != patient_of.get(m.study_id) else None)
            if reason:
                pf.rejections.append(Rejection(pf.path, m.record, "relationships.object_id", reason))
                bad.add(m.record)
        out.append(drop_records(pf, bad))
    return out
