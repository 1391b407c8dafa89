"""The prompt set of Chapter 6: 24 openings of everyday English sentences, written for this course.

Short on purpose (3 to 6 words): BERT re-reads the whole sequence for every token it writes, and
the decoder runs at about 9 tokens a second on one CPU thread, so the chapter can afford a dozen
new tokens per prompt and method, not paragraphs. They cover weather, food, places, work, people
and objects, so that repetition *across* prompts (self-BLEU) means something.
"""

PROMPTS = (
    "The weather today is",
    "My favourite food is",
    "The old house on the hill",
    "She opened the door and",
    "The best way to learn a language is",
    "Every morning, the baker",
    "The train to the city was",
    "After dinner we usually",
    "The children in the park",
    "He looked at the map and",
    "The river near our village",
    "Our teacher told us that",
    "The small dog barked at",
    "In the winter, the lake",
    "The museum was full of",
    "When the rain stopped, we",
    "The doctor said that",
    "A good friend is someone who",
    "The market sells fresh",
    "At the end of the road there is",
    "The book I am reading is about",
    "My grandmother always said",
    "The new shop in town",
    "On Sunday the streets were",
)
