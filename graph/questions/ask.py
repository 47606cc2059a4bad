"""One Medical-Diff-VQA question about one study, answered from the graph (``cxrkg diffvqa ask``): the
question parsed against the templates, the study's facts and its reference's read in one statement, the
reference chosen when a difference question names none (the latest earlier PA/AP study of the patient), the
pair checked as a question file's row is (:func:`graph.questions.rows.check_pair`)."""

from __future__ import annotations

from dataclasses import dataclass

from graph.errors import CxrkgError
from graph.questions.answer import Answer, answer
from graph.questions.facts import Reader, StudyFacts, read_patient_facts, read_study_facts, study_facts_statement
from graph.questions.parse import QuestionParseError, known_templates, parse_question


class UnanswerableQuestion(CxrkgError, ValueError):
    """A question the graph cannot answer: its study is not there, or its reference cannot be used (not in
    the graph, not earlier, another patient's, none earlier to compare with)."""


@dataclass(frozen=True)
class Asked:
    """An answer and the studies whose facts gave it (the main study first, then the reference if any)."""

    answer: Answer
    study_ids: tuple[str, ...]

    def cypher(self) -> str:
        """The statement that read those studies' facts, as Neo4j Browser runs it pasted: each parameter as
        a ``:param`` line, then the statement."""
        from graph.store.browser import browser_script

        return browser_script(*study_facts_statement(list(self.study_ids)))


def ask(reader: Reader, question: str, study: str, ref: str | None = None, strict: bool = False) -> Asked:
    """Answer ``question`` (in the templates' wording) about ``study`` against ``ref`` (default for a
    difference question: the latest earlier PA/AP study of the same patient); ``strict``: uncertain findings
    count as not present.

    Raises:
        QuestionParseError: the question fits no template (the message lists them).
        UnanswerableQuestion: the study or the reference cannot be used.
    """
    from graph.questions.rows import check_pair

    try:
        q = parse_question(question)
    except QuestionParseError as exc:
        raise QuestionParseError(f"{exc}; the templates: {'; '.join(known_templates())}") from None
    facts = read_study_facts(reader, [study] + ([ref] if ref else []))
    main, reference = facts.get(study), facts.get(ref) if ref else None
    if main is None:
        raise UnanswerableQuestion(f"--study: study {study} is not in the graph")
    if ref is None and q.question_type == "difference":
        reference = latest_earlier(reader, main)
        if reference is None:
            raise UnanswerableQuestion(f"--ref: study {study} has no earlier PA/AP study to compare with")
    if ref is not None or reference is not None:
        fault = check_pair(main, reference, study, ref or (reference.study_id if reference else ""))
        if fault:
            raise UnanswerableQuestion(f"--ref: {fault[1]}")
    read = (study,) + ((reference.study_id,) if reference else ())
    return Asked(answer(q, main, reference, strict), read)


def latest_earlier(reader: Reader, main: StudyFacts) -> StudyFacts | None:
    """The latest PA/AP study of the main study's patient before it, or None."""
    if main.order is None:
        return None
    earlier = [(s.order, s) for s in read_patient_facts(reader, [main.patient_id]).values()
               if s.frontal and s.order is not None and s.order < main.order]
    return max(earlier, key=lambda pair: pair[0])[1] if earlier else None
